import { hash } from 'node:crypto';
import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import type { FileReuse, FreshText, ScanReport, StoredText } from '@reposcan/core';
import type { ScanOptions } from '@reposcan/contracts';
import type { Logger } from '@reposcan/runtime';
import type { CloneRemoteOptions, PreparedSource } from '@reposcan/sources';
import { repositoryKey } from '@reposcan/storage';
import type { FileStore, RepositoryFiles, SegmentWriter, StoredEntry } from '@reposcan/storage';

/** What is kept per file: a text's outcome and its size on disk, or that its blob is over the clone's blob limit. */
type Meta = { size: number; text: StoredText } | { large: true };

/** Bumped when what is stored per file changes meaning without a version change. */
const KEY_FORMAT = 1;

export interface FileReuseSettings {
  store: FileStore;
  /** The reposcan version and the limits that shape a file's outcome (runtime's commitCacheSettings). */
  settings: Readonly<Record<string, string | number | boolean | null>>;
  /** The clone's blob limit (SourceSettings.maxBlobBytes): larger blobs stay on the server. */
  maxBlobBytes: number;
}

/**
 * One remote scan's use of the file cache (FileStore): before the clone, which files an earlier
 * scan processed (by path and git blob id, under the options that shape a text), so the clone
 * leaves their blobs on the server and the engine takes their stored outcome and text; during the
 * scan, what it processes afresh; after it, one new segment with that. Only with `secrets:
 * redact`, so no text is stored that a scan's outputs would not show redacted; a failure of the
 * cache only costs speed, never the scan.
 */
export class FileReuseSession {
  /** Files taken from the cache by this scan. */
  reused = 0;
  private repository: string | null = null;
  /** Opened once per scan, as soon as the repository is known to have stored files. */
  private files: Promise<RepositoryFiles<Meta>> | null = null;
  private writer: SegmentWriter<Meta> | null = null;
  private broken = false;
  /** Path → what the clone was told to leave on the server for it. */
  private readonly chosen = new Map<string, StoredEntry<Meta> & { meta: { size: number; text: StoredText } }>();
  private blobs: ReadonlyMap<string, string> = new Map();
  private readonly shaping: string;

  constructor(
    private readonly cache: FileReuseSettings,
    options: Pick<ScanOptions, 'secrets' | 'compress' | 'remove_comments'>,
    encoding: string,
    /** False with `cache: false`: nothing is taken, what is processed is still kept. */
    private readonly take: boolean,
    private readonly log: Logger,
  ) {
    const settings = Object.keys(cache.settings)
      .sort()
      .map((name) => [name, cache.settings[name]]);
    this.shaping = JSON.stringify([
      KEY_FORMAT,
      encoding,
      options.secrets,
      options.compress,
      options.remove_comments,
      settings,
    ]);
  }

  /** Whether a scan with these options may use the cache at all. */
  static applies(options: Pick<ScanOptions, 'secrets' | 'base_ref'>): boolean {
    return options.secrets === 'redact' && (options.base_ref ?? null) === null;
  }

  /** For the clone of the repository at `url`: its question (leaveOnServer), when the repository has stored files. */
  async cloneReuse(url: string): Promise<CloneRemoteOptions['leaveOnServer']> {
    this.repository = repositoryKey(url);
    if (!this.take) return undefined;
    const known = await this.cache.store.knows(this.repository).catch(() => false);
    if (!known) return undefined;
    // Read while git clones: the choice, or what the scan learns, needs them next.
    this.repositoryFiles().catch(() => {});
    return ({ blobs }) => this.choose(blobs);
  }

  /** The engine's side, once the source is on disk; undefined for a source without blob ids. */
  engineReuse(prepared: PreparedSource): FileReuse | undefined {
    if (prepared.blobs === undefined || this.repository === null) return undefined;
    this.blobs = prepared.blobs;
    // Only what the clone left off the disk: it fetches some files whatever was chosen (ignore files).
    const absent = prepared.absent ?? new Map<string, number>();
    return {
      find: (path, size) => {
        const entry = absent.has(path) ? this.chosen.get(path) : undefined;
        return entry !== undefined && entry.meta.size === size
          ? { ...entry.meta.text, bytes: entry.length }
          : undefined;
      },
      load: async (paths, into) => {
        const files = await this.repositoryFiles();
        const texts = await files.read(
          paths.map((path) => this.chosen.get(path) as StoredEntry<Meta>),
          into,
        );
        this.reused += paths.length;
        return texts;
      },
      learn: (file) => this.learn(file),
    };
  }

  /**
   * After a completed scan: blobs it found over the clone's blob limit are kept as such (the next
   * clone leaves them on the server without asking), and the segment is made visible.
   */
  async finish(report: ScanReport, root: string): Promise<void> {
    if (this.broken || this.repository === null) return this.close();
    try {
      for (const skipped of report.skipped) {
        const blob = skipped.reason === 'too_large' ? this.blobs.get(skipped.path) : undefined;
        if (blob === undefined) continue;
        const key = largeKey(this.cache.maxBlobBytes, blob);
        const files = await this.repositoryFiles();
        if (files.entries.has(key)) continue;
        const size = await lstat(join(root, skipped.path)).then(
          (s) => s.size,
          () => 0,
        );
        if (size > this.cache.maxBlobBytes) await (this.writer ??= await files.writer()).add(key, { large: true });
      }
      await this.writer?.commit();
      this.writer = null;
    } catch (error) {
      this.log.warn({ err: error }, 'file cache: could not keep what this scan processed');
    }
    await this.close();
  }

  /** Releases the segments read, dropping anything not committed. */
  async close(): Promise<void> {
    await this.writer?.abort();
    this.writer = null;
    const files = this.files;
    this.files = null;
    await (await files?.catch(() => null))?.close();
  }

  private async choose(blobs: ReadonlyMap<string, string>): Promise<ReadonlyMap<string, number>> {
    const kept = new Map<string, number>();
    try {
      const files = await this.repositoryFiles();
      for (const [path, blob] of blobs) {
        if (files.entries.has(largeKey(this.cache.maxBlobBytes, blob))) {
          kept.set(path, this.cache.maxBlobBytes + 1);
          continue;
        }
        const entry = files.entries.get(this.textKey(blob, path));
        if (entry === undefined || !('text' in entry.meta)) continue;
        kept.set(path, entry.meta.size);
        this.chosen.set(path, entry as StoredEntry<Meta> & { meta: { size: number; text: StoredText } });
      }
    } catch (error) {
      this.log.warn({ err: error }, 'file cache unavailable; this scan fetches and reads every file');
      this.chosen.clear();
      return new Map();
    }
    return kept;
  }

  private async learn(file: FreshText): Promise<void> {
    const blob = this.blobs.get(file.path);
    if (blob === undefined || this.broken) return;
    try {
      const files = await this.repositoryFiles();
      const key = this.textKey(blob, file.path);
      if (files.entries.has(key)) return;
      const { path: _path, size, content, ...text } = file;
      await (this.writer ??= await files.writer()).add(key, { size, text }, content);
    } catch (error) {
      // The rest of the scan goes on without the cache.
      this.broken = true;
      this.log.warn({ err: error }, 'file cache: could not keep what this scan processed');
    }
  }

  private repositoryFiles(): Promise<RepositoryFiles<Meta>> {
    return (this.files ??= this.cache.store.open<Meta>(this.repository as string));
  }

  /** A text's key: its blob, its path (classification and languages go by name) and the options that shape it. */
  private textKey(blob: string, path: string): string {
    return sha256(`${this.shaping}\0${blob}\0${path}`);
  }
}

function largeKey(maxBlobBytes: number, blob: string): string {
  return sha256(`${KEY_FORMAT}\0large\0${maxBlobBytes}\0${blob}`);
}

function sha256(text: string): string {
  return hash('sha256', text, 'hex');
}
