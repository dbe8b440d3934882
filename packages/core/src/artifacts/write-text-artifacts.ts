import { open, rm } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { ARTIFACT_FILE_NAMES } from './artifact-names.js';
import type { AppendedFileHash, HashAppendedFile } from '../io/appended-file-hash.js';
import { writeAll } from '../io/write-all.js';
import type { WrittenArtifact } from './artifact-names.js';
import type { FormatRenderer, HeadContext, RenderContext } from '../render/render-context.js';
import { ChunkBuffer } from './chunk-buffer.js';
import type { TextFileRecord } from '../types.js';

/**
 * An artifact is flushed to disk in the background every this many bytes, while the scan still
 * counts: the sync before publishing then waits for the last stretch only, not for 200 MB at once
 * (every 32 MB left 55-70 ms of syncing at the end of a 70 MB scan; every 8 MB, 20-25 ms).
 */
const SYNC_EVERY_BYTES = 8 << 20;

interface Artifact {
  renderer: FormatRenderer;
  file: string;
  handle: FileHandle;
  /** Made by `startHash` with the first write to the artifact itself: after the walk, when a scan knows its threads. */
  hash: AppendedFileHash | null;
  startHash: () => AppendedFileHash;
  bytes: number;
  /** Blocks are encoded into this one buffer and written when it fills. */
  out: ChunkBuffer;
  /** Blocks rendered before the head could be (the walk still running) wait here; null once the head is written. */
  early: { path: string; handle: FileHandle | null } | null;
  unsynced: number;
  /** The background sync in flight: resolves to its error, if any (the first failure stays). */
  syncing: Promise<Error | null> | null;
}

/**
 * Writes every text artifact front to back, once: the head as soon as the walk is over (`begin`),
 * each file's block as it is counted (`addFile`), the tail with the totals at the end (`finish`),
 * hashing as it goes. Blocks that come before the head wait in a file of their own, copied in
 * after the head. Memory stays at one fixed buffer per format whatever the repository's size, and
 * no content passed to addFile is referenced once it returns.
 */
export class TextArtifactWriter {
  private fileCount = 0;

  private constructor(
    private readonly artifacts: Artifact[],
    private readonly lite: boolean,
  ) {}

  /** `hashFile` hashes each artifact as it is written (hashOnThisThread, or a file thread's). */
  static async open(
    outDir: string,
    renderers: FormatRenderer[],
    lite: boolean,
    hashFile: HashAppendedFile,
  ): Promise<TextArtifactWriter> {
    const artifacts: Artifact[] = [];
    try {
      for (const renderer of renderers) {
        const file = ARTIFACT_FILE_NAMES[renderer.format];
        const path = join(outDir, file);
        const artifact: Artifact = {
          renderer,
          file,
          handle: await open(path, 'wx'),
          hash: null,
          startHash: () => hashFile(path),
          bytes: 0,
          out: new ChunkBuffer((data) => write(artifact, data)),
          early: { path: join(outDir, `.early.${renderer.format}`), handle: null },
          unsynced: 0,
          syncing: null,
        };
        artifacts.push(artifact);
      }
    } catch (error) {
      await Promise.allSettled(artifacts.map((a) => a.handle.close()));
      throw error;
    }
    return new TextArtifactWriter(artifacts, lite);
  }

  get begun(): boolean {
    return this.artifacts.every((a) => a.early === null);
  }

  /** Writes every head, then the blocks that were waiting for it. Call once, before `finish`. */
  async begin(ctx: HeadContext): Promise<void> {
    for (const artifact of this.artifacts) {
      const early = artifact.early;
      if (early === null) continue;
      await artifact.out.flush();
      artifact.early = null;
      await artifact.out.put(artifact.renderer.head(ctx));
      const waiting = early.handle;
      if (waiting === null) continue;
      try {
        // The write buffer carries the waiting blocks across.
        let position = 0;
        await artifact.out.putFrom(async (into) => {
          const { bytesRead } = await waiting.read(into, 0, into.length, position);
          position += bytesRead;
          return bytesRead;
        });
      } finally {
        // Gone whichever way the copy ends: abort() no longer knows of it.
        await waiting.close().catch(() => undefined);
        await rm(early.path, { force: true });
      }
    }
  }

  /** Append one file's block to every format; `content` is its UTF-8 text. */
  async addFile(record: TextFileRecord, content: Uint8Array): Promise<void> {
    const first = this.fileCount++ === 0;
    for (const artifact of this.artifacts) {
      if (!first) await artifact.out.put(artifact.renderer.separator);
      for (const chunk of artifact.renderer.file(record, content, this.lite)) await artifact.out.put(chunk);
    }
  }

  /** Writes every tail and syncs every artifact to disk; `ctx` is the one given to `begin` plus the totals. */
  async finish(ctx: RenderContext): Promise<WrittenArtifact[]> {
    if (!this.begun) throw new Error('TextArtifactWriter.begin() must come before finish()');
    for (const artifact of this.artifacts) {
      await artifact.out.put(artifact.renderer.tail(ctx, this.fileCount));
      await artifact.out.flush();
    }
    const settled = await Promise.allSettled(
      this.artifacts.map(async (artifact): Promise<WrittenArtifact> => {
        const failed = await artifact.syncing;
        if (failed) throw failed;
        await artifact.handle.datasync();
        await artifact.handle.close();
        return {
          format: artifact.renderer.format,
          file: artifact.file,
          bytes: artifact.bytes,
          sha256: await (artifact.hash ??= artifact.startHash()).digest(),
        };
      }),
    );
    // All settle before a failure is reported: the caller's clean-up must not race a late sync.
    const rejected = settled.find((s) => s.status === 'rejected');
    if (rejected) throw rejected.reason;
    return settled.map((s) => (s as PromiseFulfilledResult<WrittenArtifact>).value);
  }

  /** Closes everything after a failure; the caller removes the artifacts. */
  async abort(): Promise<void> {
    await Promise.allSettled(
      this.artifacts.flatMap((a) => [...(a.hash ? [a.hash.drop()] : []), ...(a.syncing ? [a.syncing] : [])]),
    );
    await Promise.allSettled(
      this.artifacts.flatMap((a) => [a.handle.close(), ...(a.early?.handle ? [a.early.handle.close()] : [])]),
    );
    await Promise.allSettled(this.artifacts.flatMap((a) => (a.early ? [rm(a.early.path, { force: true })] : [])));
  }
}

/** Appends `data` to the artifact, or to its waiting blocks before the head is written. */
async function write(artifact: Artifact, data: Uint8Array): Promise<void> {
  const early = artifact.early;
  if (early !== null) {
    early.handle ??= await open(early.path, 'wx+');
    return writeAll(early.handle, data);
  }
  artifact.hash ??= artifact.startHash();
  await writeAll(artifact.handle, data);
  artifact.bytes += data.byteLength;
  // Written first: a file thread's hash reads these bytes back.
  artifact.hash.appended(data, artifact.bytes);
  artifact.unsynced += data.byteLength;
  if (artifact.unsynced >= SYNC_EVERY_BYTES && artifact.syncing === null) {
    artifact.unsynced = 0;
    artifact.syncing = artifact.handle.datasync().then(
      () => {
        artifact.syncing = null;
        return null;
      },
      (error: unknown) => (error instanceof Error ? error : new Error(String(error))),
    );
  }
}
