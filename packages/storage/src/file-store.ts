import { randomUUID } from 'node:crypto';
import { mkdir, open, readdir, rename, rm, rmdir, stat, utimes } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { writeAll } from '@reposcan/core';
import { writeFileAtomic } from './atomic-write.js';
import { readdirOrEmpty } from './fs-errors.js';

/**
 * Per-file outcomes of earlier scans on the shared volume, so a rescan of a new commit processes
 * only the files that changed. One folder per repository (`<repository key>/`), holding segments:
 * `<name>.bin` is the texts of one scan's fresh files back to back, `<name>.idx` one line per file
 * (`[key, offset, length, meta]`), written last, so a segment without its index is never read.
 * Segments never change once written; every worker reads them all and adds its own. A segment
 * used by a scan has its times renewed, and the janitor drops those unused for FILE_CACHE_DAYS.
 * Keys and meta are the caller's: this file stores strings and JSON.
 */
export class FileStore {
  constructor(private readonly root: string) {}

  /** Whether any scan of this repository stored files here (worth asking a clone for blob ids first). */
  async knows(repository: string): Promise<boolean> {
    const names = await readdirOrEmpty(this.folder(repository));
    return names.some((name) => name.endsWith(INDEX));
  }

  /** Every stored entry of this repository, with its segments held open until `close`. */
  async open<M>(repository: string): Promise<RepositoryFiles<M>> {
    const folder = this.folder(repository);
    const files = new RepositoryFiles<M>(folder);
    const names = await readdirOrEmpty(folder);
    for (const name of names.filter((n) => n.endsWith(INDEX)).sort()) await files.load(name.slice(0, -INDEX.length));
    return files;
  }

  /** Drops segments unused since `before` (ms since the epoch); returns how many. */
  async prune(before: number): Promise<number> {
    let dropped = 0;
    const repositories = await readdirOrEmpty(this.root);
    for (const repository of repositories) {
      const folder = join(this.root, repository);
      const names = await readdir(folder).catch(() => [] as string[]);
      for (const name of names) {
        const segment = name.endsWith(INDEX) ? name.slice(0, -INDEX.length) : null;
        const path = join(folder, name);
        const changed = await stat(path).then(
          (s) => s.mtimeMs,
          () => null,
        );
        if (changed === null || changed >= before) continue;
        if (segment !== null) {
          // The index first: a segment is never listed without its texts.
          await rm(path, { force: true });
          await rm(join(folder, segment + TEXTS), { force: true });
          dropped++;
        } else if (name.startsWith('.') || !names.includes(name.slice(0, -TEXTS.length) + INDEX))
          await rm(path, { force: true }); // a writer that never finished, or texts whose index went
      }
      await rmdir(folder).catch(() => {}); // only when empty
    }
    return dropped;
  }

  private folder(repository: string): string {
    if (!/^[0-9a-f]{64}$/.test(repository)) throw new Error('FileStore: a repository key is 64 hex digits');
    return join(this.root, repository);
  }
}

const INDEX = '.idx';
const TEXTS = '.bin';
/** A segment's index may not be larger than this; a bigger one is not read (a damaged or foreign file). */
const MAX_INDEX_BYTES = 256 << 20;

export interface StoredEntry<M> {
  segment: string;
  offset: number;
  length: number;
  meta: M;
}

interface Segment {
  handle: FileHandle;
  used: boolean;
}

/** One repository's stored entries, and what a scan adds to them. */
export class RepositoryFiles<M> {
  readonly entries = new Map<string, StoredEntry<M>>();
  private readonly segments = new Map<string, Segment>();

  constructor(private readonly folder: string) {}

  /** Reads one segment's index and opens its texts, so a janitor's later removal cannot take them away. */
  async load(segment: string): Promise<void> {
    let handle: FileHandle;
    try {
      handle = await open(join(this.folder, segment + TEXTS), 'r');
    } catch {
      return; // pruned meanwhile
    }
    const size = (await handle.stat()).size;
    const index = await open(join(this.folder, segment + INDEX), 'r')
      .then(async (file) => {
        try {
          return (await file.stat()).size > MAX_INDEX_BYTES ? null : await file.readFile('utf8');
        } finally {
          await file.close();
        }
      })
      .catch(() => null);
    const entries = index === null ? null : parseIndex<M>(index, segment, size);
    if (entries === null) {
      await handle.close();
      return;
    }
    this.segments.set(segment, { handle, used: false });
    for (const [key, entry] of entries) this.entries.set(key, entry);
  }

  /**
   * The texts of these entries, in order, read back to back into `into` (at least their total
   * length; the caller's memory, so a rescan holds no more than a fresh read would): each text is
   * a view of it. Neighbours in one segment are read in one go.
   */
  async read(entries: readonly StoredEntry<M>[], into: Uint8Array): Promise<Uint8Array[]> {
    const total = entries.reduce((sum, entry) => sum + entry.length, 0);
    if (into.length < total) throw new RangeError(`FileStore: ${total} bytes of texts do not fit ${into.length}`);
    const texts: Uint8Array[] = new Array<Uint8Array>(entries.length);
    let at = 0;
    let i = 0;
    while (i < entries.length) {
      const first = entries[i] as StoredEntry<M>;
      let end = first.offset + first.length;
      let j = i + 1;
      for (; j < entries.length; j++) {
        const next = entries[j] as StoredEntry<M>;
        if (next.segment !== first.segment || next.offset !== end) break;
        end += next.length;
      }
      const segment = this.segments.get(first.segment);
      if (segment === undefined) throw new Error('FileStore: an entry of a segment that is not open');
      segment.used = true;
      const run = into.subarray(at, at + end - first.offset);
      let done = 0;
      while (done < run.length) {
        const { bytesRead } = await segment.handle.read(run, done, run.length - done, first.offset + done);
        if (bytesRead === 0) throw new Error('FileStore: a segment is shorter than its index says');
        done += bytesRead;
      }
      for (let k = i; k < j; k++) {
        const entry = entries[k] as StoredEntry<M>;
        texts[k] = into.subarray(at, at + entry.length);
        at += entry.length;
      }
      i = j;
    }
    return texts;
  }

  /** A new segment for what this scan learns; nothing is visible until `commit`. */
  async writer(): Promise<SegmentWriter<M>> {
    await mkdir(this.folder, { recursive: true });
    return SegmentWriter.open<M>(this.folder);
  }

  /** Renews the times of the segments read from (the janitor keeps what is used), and closes them. */
  async close(now = new Date()): Promise<void> {
    const segments = [...this.segments];
    this.segments.clear();
    for (const [name, segment] of segments) {
      await segment.handle.close().catch(() => {});
      if (segment.used) {
        for (const file of [name + INDEX, name + TEXTS])
          await utimes(join(this.folder, file), now, now).catch(() => {});
      }
    }
  }
}

function parseIndex<M>(text: string, segment: string, size: number): [string, StoredEntry<M>][] | null {
  const entries: [string, StoredEntry<M>][] = [];
  try {
    for (const line of text.split('\n')) {
      if (line === '') continue;
      const [key, offset, length, meta] = JSON.parse(line) as [unknown, unknown, unknown, M];
      if (
        typeof key !== 'string' ||
        !Number.isSafeInteger(offset) ||
        !Number.isSafeInteger(length) ||
        (offset as number) < 0 ||
        (length as number) < 0 ||
        (offset as number) + (length as number) > size
      )
        return null;
      entries.push([key, { segment, offset: offset as number, length: length as number, meta }]);
    }
  } catch {
    return null;
  }
  return entries;
}

const WRITE_BUFFER_BYTES = 1 << 20;

/** Appends texts to a hidden file, then publishes it: texts synced and renamed, the index written last. */
export class SegmentWriter<M> {
  private readonly lines: string[] = [];
  private readonly buffer = Buffer.allocUnsafe(WRITE_BUFFER_BYTES);
  private used = 0;
  private bytes = 0;

  private constructor(
    private readonly folder: string,
    private readonly name: string,
    private readonly handle: FileHandle,
  ) {}

  static async open<M>(folder: string): Promise<SegmentWriter<M>> {
    const name = `${Date.now().toString().padStart(14, '0')}-${randomUUID()}`;
    return new SegmentWriter<M>(folder, name, await open(join(folder, `.${name}${TEXTS}`), 'wx'));
  }

  /** Stores `meta` under `key`, with a text (copied before this returns) or none. */
  async add(key: string, meta: M, text: Uint8Array = EMPTY): Promise<void> {
    this.lines.push(JSON.stringify([key, this.bytes, text.length, meta]));
    this.bytes += text.length;
    if (this.used + text.length > this.buffer.length) await this.flush();
    if (text.length >= this.buffer.length) await writeAll(this.handle, text);
    else {
      this.buffer.set(text, this.used);
      this.used += text.length;
    }
  }

  /** Makes the segment visible to every later scan; nothing if it holds no entry. */
  async commit(): Promise<void> {
    try {
      await this.flush();
      if (this.lines.length > 0) await this.handle.datasync();
    } finally {
      await this.handle.close();
    }
    const hidden = join(this.folder, `.${this.name}${TEXTS}`);
    if (this.lines.length === 0) {
      await rm(hidden, { force: true });
      return;
    }
    await rename(hidden, join(this.folder, this.name + TEXTS));
    await writeFileAtomic(join(this.folder, this.name + INDEX), `${this.lines.join('\n')}\n`);
  }

  /** Leaves nothing behind. */
  async abort(): Promise<void> {
    await this.handle.close().catch(() => {});
    await rm(join(this.folder, `.${this.name}${TEXTS}`), { force: true });
  }

  private async flush(): Promise<void> {
    if (this.used === 0) return;
    const used = this.used;
    this.used = 0;
    await writeAll(this.handle, this.buffer.subarray(0, used));
  }
}

const EMPTY = new Uint8Array(0);
