import { Buffer } from 'node:buffer';
import { open, rm } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { ScannedFileRecord } from '../types.js';
import { readExactly, readExactlyInto } from '../io/read-exactly.js';
import { writeAll } from '../io/write-all.js';
import type { RangeMarks } from './part-tally.js';

/** A textual file whose content waits in the spool, at bytes [at, at + length). */
export interface SpooledFile {
  record: ScannedFileRecord;
  at: number;
  length: number;
  /** Its content's range marks, when they came with its count (countingMarks). */
  marks?: RangeMarks;
}

/** Reads spooled contents back, in spool order for speed; each reader keeps a window of its own. */
export type ReadSpooled = (file: SpooledFile) => Promise<Uint8Array>;

/** Bytes of the spool read back at once. */
const READ_WINDOW = 4 << 20;

/**
 * The textual files' contents, kept in one file of the output folder while the scan runs: parts
 * are planned once every count is known, and no content outlives its batch in memory.
 */
export class ContentSpool {
  private readonly files: SpooledFile[] = [];
  private buffer = Buffer.allocUnsafe(1 << 20);
  private used = 0;
  private position = 0;
  /** Set once no file is to come: null while the scan runs, true when it ended, the error when it failed. */
  private over: true | { error: unknown } | null = null;
  private waiting: Array<() => void> = [];

  private constructor(
    readonly path: string,
    private readonly handle: FileHandle,
  ) {}

  static async open(outDir: string): Promise<ContentSpool> {
    const path = join(outDir, '.content-spool');
    return new ContentSpool(path, await open(path, 'wx+'));
  }

  get spooled(): readonly SpooledFile[] {
    return this.files;
  }

  /**
   * Whether file `index` is in the spool, waiting until its bytes are on disk (readable) or no
   * file is to come; throws the scan's error once it failed.
   */
  async ready(index: number): Promise<boolean> {
    for (;;) {
      if (this.over !== null && this.over !== true) throw this.over.error;
      const file = this.files[index];
      if (file !== undefined && file.at + file.length <= this.position) return true;
      if (this.over === true) return false;
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
  }

  /** No more files: every content is flushed and readable. */
  async end(): Promise<void> {
    await this.flush();
    this.over = true;
    this.wake();
  }

  /** The scan failed: whoever waits for a file hears `error`. */
  abandon(error: unknown): void {
    this.over ??= { error };
    this.wake();
  }

  private wake(): void {
    const waiting = this.waiting;
    this.waiting = [];
    for (const resolve of waiting) resolve();
  }

  /** Keeps a copy of `content` (valid only until this returns) for `record`, with its range marks when known. */
  async add(record: ScannedFileRecord, content: Uint8Array, marks?: RangeMarks): Promise<void> {
    const at = this.position + this.used;
    const length = content.length;
    if (length > this.buffer.length - this.used) await this.flush();
    if (length > this.buffer.length) await this.append(content);
    else {
      this.buffer.set(content, this.used);
      this.used += length;
    }
    this.files.push(marks ? { record, at, length, marks } : { record, at, length });
    // A content written straight through is readable at once.
    if (at + length <= this.position) this.wake();
  }

  /**
   * A reader of spooled contents that reads a window of READ_WINDOW bytes at a time: one read per
   * file cost more waiting than everything else parts do. A window is never reused, so a content
   * it gave stays valid for as long as a part holds it.
   */
  reader(): ReadSpooled {
    let window: { start: number; bytes: Buffer } | null = null;
    return async ({ at, length }) => {
      if (window !== null && at >= window.start && at + length <= window.start + window.bytes.length)
        return window.bytes.subarray(at - window.start, at - window.start + length);
      const size = Math.max(length, Math.min(READ_WINDOW, this.position - at));
      const bytes = await this.readAt(at, size);
      window = { start: at, bytes };
      return bytes.subarray(0, length);
    };
  }

  /**
   * One file's content, read on its own into `into` (of its length): for a reader that takes the
   * files in another order than the spool's.
   */
  read(file: SpooledFile, into: Uint8Array): Promise<Uint8Array> {
    return readExactlyInto(this.handle, file.at, into, 'The content spool');
  }

  private readAt(at: number, length: number): Promise<Buffer> {
    return readExactly(this.handle, at, length, 'The content spool');
  }

  async flush(): Promise<void> {
    if (this.used === 0) return;
    const data = this.buffer.subarray(0, this.used);
    this.used = 0;
    await this.append(data);
  }

  /** Appends `data` (reads name their positions, so the handle's own stays at the end); then it is readable. */
  private async append(data: Uint8Array): Promise<void> {
    await writeAll(this.handle, data);
    this.position += data.length;
    this.wake();
  }

  async close(): Promise<void> {
    await this.handle.close().catch(() => undefined);
    await rm(this.path, { force: true });
  }
}
