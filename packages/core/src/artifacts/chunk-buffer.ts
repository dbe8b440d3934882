import { Buffer } from 'node:buffer';
import { escapeJsonInto, MAX_ESCAPED_BYTES } from '../render/json-string.js';
import type { EscapeProgress } from '../render/json-string.js';
import type { RenderedChunk } from '../render/render-context.js';

const WRITE_BUFFER_BYTES = 1 << 20;
/** Contents this large are written from where they are, not copied into the buffer. */
const WRITE_DIRECTLY_AT = 256 * 1024;
/** UTF-8 bytes a string of n UTF-16 units takes, at most. */
const MAX_UTF8_PER_UNIT = 3;
const QUOTE = 0x22;

/**
 * An artifact's pieces gathered into one fixed buffer and handed to `write` a buffer-full at a
 * time: a write per piece costs a round trip to the file system each, and strings and JSON
 * string literals are encoded straight into the buffer, never into buffers or strings of their own.
 */
export class ChunkBuffer {
  private readonly buffer = Buffer.allocUnsafe(WRITE_BUFFER_BYTES);
  private used = 0;
  /** Bytes handed to `write` so far. */
  private written = 0;
  private readonly escaped: EscapeProgress = { read: 0, written: 0 };

  /** `write` must be done with `data` when it resolves: the buffer is filled again after. */
  constructor(private readonly write: (data: Uint8Array) => Promise<void>) {}

  /** Bytes put so far, written or still in the buffer. */
  get position(): number {
    return this.written + this.used;
  }

  private get room(): number {
    return this.buffer.length - this.used;
  }

  async put(chunk: RenderedChunk): Promise<void> {
    if (typeof chunk === 'object' && 'jsonString' in chunk) return this.putJsonString(chunk.jsonString);
    if (typeof chunk === 'string') {
      if (this.takeString(chunk)) return;
      await this.flush();
      if (!this.takeString(chunk)) await this.writeOut(Buffer.from(chunk, 'utf8'));
      return;
    }
    if (chunk.byteLength >= WRITE_DIRECTLY_AT) {
      await this.flush();
      return this.writeOut(chunk);
    }
    if (chunk.byteLength > this.room) await this.flush();
    this.buffer.set(chunk, this.used);
    this.used += chunk.byteLength;
  }

  /** `content` as a JSON string literal, escaped into the buffer a buffer-full at a time. */
  private async putJsonString(content: Uint8Array): Promise<void> {
    if (this.room < MAX_ESCAPED_BYTES + 1) await this.flush();
    this.buffer[this.used++] = QUOTE;
    for (let read = 0; read < content.length;) {
      if (this.room < MAX_ESCAPED_BYTES) await this.flush();
      escapeJsonInto(content, read, this.buffer, this.used, this.escaped);
      read = this.escaped.read;
      this.used = this.escaped.written;
    }
    if (this.room === 0) await this.flush();
    this.buffer[this.used++] = QUOTE;
  }

  /** Copies what fits of `source[start, end)` into the buffer; how many bytes it took (none: flush first). */
  take(source: Buffer, start: number, end: number): number {
    const n = Math.min(end - start, this.room);
    source.copy(this.buffer, this.used, start, start + n);
    this.used += n;
    return n;
  }

  /** Encodes `text` into the buffer when it surely fits; false when it must be flushed first (or `put`, which does). */
  takeString(text: string): boolean {
    if (text.length * MAX_UTF8_PER_UNIT > this.room) return false;
    this.used += this.buffer.write(text, this.used, 'utf8');
    return true;
  }

  /** Appends what `read` puts at the start of the (emptied) buffer, a buffer-full at a time until it reads nothing. */
  async putFrom(read: (into: Buffer) => Promise<number>): Promise<void> {
    await this.flush();
    for (;;) {
      const bytesRead = await read(this.buffer);
      if (bytesRead === 0) return;
      this.used = bytesRead;
      await this.flush();
    }
  }

  async flush(): Promise<void> {
    if (this.used === 0) return;
    const used = this.used;
    this.used = 0;
    await this.writeOut(this.buffer.subarray(0, used));
  }

  private writeOut(data: Uint8Array): Promise<void> {
    this.written += data.byteLength;
    return this.write(data);
  }
}
