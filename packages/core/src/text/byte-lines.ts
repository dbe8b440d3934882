import { Buffer } from 'node:buffer';
import { asBuffer } from './utf8.js';

const NEWLINE = 0x0a;

/**
 * Calls `onLine` with every line of the bytes `chunks` give in turn (without its newline; the last
 * one too when it has none) and the offset it starts at: a file read a window at a time, lines
 * held only while `onLine` runs, however large the file.
 */
export async function forEachLine(
  chunks: AsyncIterable<Uint8Array>,
  onLine: (line: Buffer, at: number) => void,
): Promise<void> {
  let carry: Buffer = Buffer.alloc(0);
  let read = 0;
  for await (const chunk of chunks) {
    const bytes = carry.length === 0 ? asBuffer(chunk) : Buffer.concat([carry, chunk]);
    const base = read - carry.length;
    read += chunk.length;
    let start = 0;
    for (let end = bytes.indexOf(NEWLINE); end !== -1; end = bytes.indexOf(NEWLINE, start)) {
      onLine(bytes.subarray(start, end), base + start);
      start = end + 1;
    }
    carry = bytes.subarray(start);
  }
  if (carry.length > 0) onLine(carry, read - carry.length);
}
