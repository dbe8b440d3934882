import { Buffer } from 'node:buffer';
import { open, rm } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { ARTIFACT_FILE_NAMES } from './artifact-names.js';
import type { WrittenArtifact } from './artifact-names.js';
import type { AssembledArtifact, AssembleRequest } from './assemble-artifact.js';
import type { FormatRenderer, RenderContext, RenderedChunk } from '../render/render-context.js';
import type { TextFileRecord } from '../types.js';

const WRITE_BUFFER_BYTES = 1 << 20;
/** Contents this large are written from where they are, not copied into the write buffer. */
const WRITE_DIRECTLY_AT = 256 * 1024;
/** UTF-8 bytes a string of n UTF-16 units takes, at most. */
const MAX_UTF8_PER_UNIT = 3;

interface Body {
  renderer: FormatRenderer;
  path: string;
  handle: FileHandle;
  /** Blocks are encoded into this one buffer and written when it fills. */
  buffer: Buffer;
  used: number;
}

/** Puts one artifact together from its parts (`assembleArtifactSync`, on a thread or not). */
export type AssembleArtifact = (request: AssembleRequest) => Promise<AssembledArtifact>;

/**
 * Streams file blocks of every format to a body file as they arrive, then writes each artifact
 * as head + body + tail (the head holds totals known only at the end). Memory stays at one fixed
 * buffer per format whatever the repository's size, and no content passed to addFile is
 * referenced once it returns.
 */
export class TextArtifactWriter {
  private fileCount = 0;

  private constructor(
    private readonly outDir: string,
    private readonly bodies: Body[],
    private readonly lite: boolean,
  ) {}

  static async open(outDir: string, renderers: FormatRenderer[], lite: boolean): Promise<TextArtifactWriter> {
    const bodies: Body[] = [];
    try {
      for (const renderer of renderers) {
        const path = join(outDir, `.body.${renderer.format}`);
        bodies.push({ renderer, path, handle: await open(path, 'wx+'), buffer: Buffer.allocUnsafe(WRITE_BUFFER_BYTES), used: 0 });
      }
    } catch (error) {
      await Promise.allSettled(bodies.map((b) => b.handle.close()));
      throw error;
    }
    return new TextArtifactWriter(outDir, bodies, lite);
  }

  /** Append one file's block to every format; `content` is its UTF-8 text. */
  async addFile(record: TextFileRecord, content: Uint8Array): Promise<void> {
    const index = this.fileCount++;
    for (const body of this.bodies) {
      for (const chunk of body.renderer.file(record, content, index, this.lite)) await put(body, chunk);
    }
  }

  /** Write every artifact, all at once, and remove the body files. */
  async finish(ctx: RenderContext, assemble: AssembleArtifact): Promise<WrittenArtifact[]> {
    for (const body of this.bodies) {
      await flush(body);
      await body.handle.close();
    }
    const settled = await Promise.allSettled(
      this.bodies.map(async (body): Promise<WrittenArtifact> => {
        const { format } = body.renderer;
        const file = ARTIFACT_FILE_NAMES[format];
        const assembled = await assemble({
          outPath: join(this.outDir, file),
          head: body.renderer.head(ctx),
          bodyPath: body.path,
          tail: body.renderer.tail(ctx, this.fileCount),
        });
        await rm(body.path, { force: true });
        return { format, file, ...assembled };
      }),
    );
    // All settle before a failure is reported: the caller's clean-up must not race a late write.
    const failed = settled.find((s) => s.status === 'rejected');
    if (failed) throw failed.reason;
    return settled.map((s) => (s as PromiseFulfilledResult<WrittenArtifact>).value);
  }

  /** Drop the partial bodies after a failure. */
  async abort(): Promise<void> {
    await Promise.allSettled(this.bodies.map((b) => b.handle.close()));
    await Promise.allSettled(this.bodies.map((b) => rm(b.path, { force: true })));
  }
}

async function put(body: Body, chunk: RenderedChunk): Promise<void> {
  const room = (): number => body.buffer.length - body.used;
  if (typeof chunk === 'string') {
    const most = chunk.length * MAX_UTF8_PER_UNIT;
    if (most > room()) await flush(body);
    if (most > room()) return writeAll(body.handle, Buffer.from(chunk, 'utf8'));
    body.used += body.buffer.write(chunk, body.used, 'utf8');
    return;
  }
  if (chunk.byteLength >= WRITE_DIRECTLY_AT) {
    await flush(body);
    return writeAll(body.handle, chunk);
  }
  if (chunk.byteLength > room()) await flush(body);
  body.buffer.set(chunk, body.used);
  body.used += chunk.byteLength;
}

async function flush(body: Body): Promise<void> {
  if (body.used === 0) return;
  const used = body.used;
  body.used = 0;
  await writeAll(body.handle, body.buffer.subarray(0, used));
}

/** Writes all of `data` at the handle's current position (a write may take less than asked). */
async function writeAll(handle: FileHandle, data: Uint8Array): Promise<void> {
  for (let offset = 0; offset < data.byteLength; ) {
    const { bytesWritten } = await handle.write(data, offset, data.byteLength - offset);
    offset += bytesWritten;
  }
}
