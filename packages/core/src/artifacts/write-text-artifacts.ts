import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import { open, rm } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { ARTIFACT_FILE_NAMES } from './artifact-names.js';
import type { WrittenArtifact } from './artifact-names.js';
import type { FormatRenderer, RenderContext, RenderedChunk } from '../render/render-context.js';
import type { TextFileRecord } from '../types.js';

const WRITE_BUFFER_BYTES = 1 << 20;
/** Contents this large are written from where they are, not copied into the write buffer. */
const WRITE_DIRECTLY_AT = 256 * 1024;
const COPY_CHUNK = 1 << 20;
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

/**
 * Streams file blocks of every format to a body file as they arrive, then writes each artifact
 * as head + body + tail. Memory stays at one fixed buffer per format whatever the repository's
 * size, and no content passed to addFile is referenced once it returns.
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

  /** Write every artifact and remove the body files. */
  async finish(ctx: RenderContext): Promise<WrittenArtifact[]> {
    const written: WrittenArtifact[] = [];
    for (const body of this.bodies) {
      await flush(body);
      const file = ARTIFACT_FILE_NAMES[body.renderer.format];
      written.push(await assemble(this.outDir, file, body, body.renderer.head(ctx), body.renderer.tail(ctx, this.fileCount), body.renderer.format));
      await body.handle.close();
      await rm(body.path, { force: true });
    }
    return written;
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

async function assemble(
  outDir: string,
  file: string,
  body: Body,
  head: string,
  tail: string,
  format: WrittenArtifact['format'],
): Promise<WrittenArtifact> {
  const hash = createHash('sha256');
  const out = await open(join(outDir, file), 'wx');
  let bytes = 0;
  const put = async (data: Uint8Array): Promise<void> => {
    hash.update(data);
    bytes += data.byteLength;
    await writeAll(out, data);
  };
  try {
    await put(Buffer.from(head, 'utf8'));
    const chunk = Buffer.allocUnsafe(COPY_CHUNK);
    let position = 0;
    for (;;) {
      const { bytesRead } = await body.handle.read(chunk, 0, COPY_CHUNK, position);
      if (bytesRead === 0) break;
      position += bytesRead;
      await put(chunk.subarray(0, bytesRead));
    }
    await put(Buffer.from(tail, 'utf8'));
    await out.datasync();
  } finally {
    await out.close();
  }
  return { format, file, bytes, sha256: hash.digest('hex') };
}
