import { Buffer } from 'node:buffer';
import { open, rm } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { ARTIFACT_FILE_NAMES } from './artifact-names.js';
import type { AppendedFileHash, HashAppendedFile } from '../io/appended-file-hash.js';
import { writeAll } from '../io/write-all.js';
import type { WrittenArtifact } from './artifact-names.js';
import { escapeJsonInto, MAX_ESCAPED_BYTES } from '../render/json-string.js';
import type { EscapeProgress } from '../render/json-string.js';
import type { FormatRenderer, HeadContext, RenderContext, RenderedChunk } from '../render/render-context.js';
import type { TextFileRecord } from '../types.js';

const WRITE_BUFFER_BYTES = 1 << 20;
/** Contents this large are written from where they are, not copied into the write buffer. */
const WRITE_DIRECTLY_AT = 256 * 1024;
/** UTF-8 bytes a string of n UTF-16 units takes, at most. */
const MAX_UTF8_PER_UNIT = 3;
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
  buffer: Buffer;
  used: number;
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
        artifacts.push({
          renderer,
          file,
          handle: await open(path, 'wx'),
          hash: null,
          startHash: () => hashFile(path),
          bytes: 0,
          buffer: Buffer.allocUnsafe(WRITE_BUFFER_BYTES),
          used: 0,
          early: { path: join(outDir, `.early.${renderer.format}`), handle: null },
          unsynced: 0,
          syncing: null,
        });
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
      await flush(artifact);
      artifact.early = null;
      await put(artifact, artifact.renderer.head(ctx));
      const waiting = early.handle;
      if (waiting === null) continue;
      try {
        await flush(artifact);
        // The write buffer is empty: it carries the waiting blocks across.
        for (let position = 0; ;) {
          const { bytesRead } = await waiting.read(artifact.buffer, 0, artifact.buffer.length, position);
          if (bytesRead === 0) break;
          position += bytesRead;
          artifact.used = bytesRead;
          await flush(artifact);
        }
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
      if (!first) await put(artifact, artifact.renderer.separator);
      for (const chunk of artifact.renderer.file(record, content, this.lite)) await put(artifact, chunk);
    }
  }

  /** Writes every tail and syncs every artifact to disk; `ctx` is the one given to `begin` plus the totals. */
  async finish(ctx: RenderContext): Promise<WrittenArtifact[]> {
    if (!this.begun) throw new Error('TextArtifactWriter.begin() must come before finish()');
    for (const artifact of this.artifacts) {
      await put(artifact, artifact.renderer.tail(ctx, this.fileCount));
      await flush(artifact);
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

async function put(artifact: Artifact, chunk: RenderedChunk): Promise<void> {
  const room = (): number => artifact.buffer.length - artifact.used;
  if (typeof chunk === 'object' && 'jsonString' in chunk) return putJsonString(artifact, chunk.jsonString);
  if (typeof chunk === 'string') {
    const most = chunk.length * MAX_UTF8_PER_UNIT;
    if (most > room()) await flush(artifact);
    if (most > room()) return write(artifact, Buffer.from(chunk, 'utf8'));
    artifact.used += artifact.buffer.write(chunk, artifact.used, 'utf8');
    return;
  }
  if (chunk.byteLength >= WRITE_DIRECTLY_AT) {
    await flush(artifact);
    return write(artifact, chunk);
  }
  if (chunk.byteLength > room()) await flush(artifact);
  artifact.buffer.set(chunk, artifact.used);
  artifact.used += chunk.byteLength;
}

const QUOTE = 0x22;
const escaped: EscapeProgress = { read: 0, written: 0 };

/** `content` as a JSON string literal, escaped into the write buffer a buffer-full at a time. */
async function putJsonString(artifact: Artifact, content: Uint8Array): Promise<void> {
  if (artifact.buffer.length - artifact.used < MAX_ESCAPED_BYTES + 1) await flush(artifact);
  artifact.buffer[artifact.used++] = QUOTE;
  for (let read = 0; read < content.length;) {
    if (artifact.buffer.length - artifact.used < MAX_ESCAPED_BYTES) await flush(artifact);
    escapeJsonInto(content, read, artifact.buffer, artifact.used, escaped);
    read = escaped.read;
    artifact.used = escaped.written;
  }
  if (artifact.used === artifact.buffer.length) await flush(artifact);
  artifact.buffer[artifact.used++] = QUOTE;
}

async function flush(artifact: Artifact): Promise<void> {
  if (artifact.used === 0) return;
  const used = artifact.used;
  artifact.used = 0;
  await write(artifact, artifact.buffer.subarray(0, used));
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
