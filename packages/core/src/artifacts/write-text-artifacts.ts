import { createHash } from 'node:crypto';
import { open, rm } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { ARTIFACT_FILE_NAMES } from './artifact-names.js';
import type { WrittenArtifact } from './artifact-names.js';
import type { FormatRenderer, RenderContext } from '../render/render-context.js';
import type { TextFileRecord } from '../types.js';

const FLUSH_AT = 1 << 20;
const COPY_CHUNK = 1 << 20;

interface Body {
  renderer: FormatRenderer;
  path: string;
  handle: FileHandle;
  pending: string[];
  pendingLength: number;
}

/**
 * Streams file blocks of every format to a body file as they arrive, then writes each artifact
 * as head + body + tail. Memory stays at about one buffer per format whatever the repository's size.
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
        bodies.push({ renderer, path, handle: await open(path, 'wx+'), pending: [], pendingLength: 0 });
      }
    } catch (error) {
      await Promise.allSettled(bodies.map((b) => b.handle.close()));
      throw error;
    }
    return new TextArtifactWriter(outDir, bodies, lite);
  }

  async addFile(record: TextFileRecord, text: string): Promise<void> {
    const index = this.fileCount++;
    for (const body of this.bodies) {
      const block = body.renderer.file(record, text, index, this.lite);
      body.pending.push(block);
      body.pendingLength += block.length;
      if (body.pendingLength >= FLUSH_AT) await flush(body);
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

async function flush(body: Body): Promise<void> {
  if (body.pending.length === 0) return;
  const chunk = body.pending.join('');
  body.pending = [];
  body.pendingLength = 0;
  await body.handle.write(chunk);
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
    let offset = 0;
    while (offset < data.byteLength) {
      const { bytesWritten } = await out.write(data, offset, data.byteLength - offset);
      offset += bytesWritten;
    }
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
