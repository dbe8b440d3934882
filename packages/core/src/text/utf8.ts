// UTF-8 contents travel through the engine as bytes, never as one big JS string: a string over
// V8's regular object size lands in large-object space, which only a full mark-compact frees, so
// a scan that decoded every file would let the heap grow far past what it actually holds.
import { Buffer } from 'node:buffer';

/** A Buffer view of the same memory (no copy), for Buffer's native search and decode. */
export function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

export function utf8Encode(text: string): Uint8Array {
  return Buffer.from(text, 'utf8');
}

/**
 * The largest `end` ≤ `limit` that does not cut a character of UTF-8 `bytes` in two: it backs up
 * over continuation bytes (10xxxxxx). `limit` past the end is the end.
 */
export function utf8Boundary(bytes: Uint8Array, limit: number): number {
  if (limit >= bytes.length) return bytes.length;
  let end = limit;
  while (end > 0 && ((bytes[end] as number) & 0xc0) === 0x80) end--;
  return end;
}

export function endsWithNewline(bytes: Uint8Array): boolean {
  return bytes.length > 0 && bytes[bytes.length - 1] === 0x0a;
}
