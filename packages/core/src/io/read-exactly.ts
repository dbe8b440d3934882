import { Buffer } from 'node:buffer';
import type { FileHandle } from 'node:fs/promises';

/** Bytes [at, at + length) of the file (a read may return less than asked); `what` names it when it is shorter. */
export async function readExactly(handle: FileHandle, at: number, length: number, what: string): Promise<Buffer> {
  const into = Buffer.allocUnsafe(length);
  for (let done = 0; done < length;) {
    const { bytesRead } = await handle.read(into, done, length - done, at + done);
    if (bytesRead === 0) throw new Error(`${what} ended before byte ${at + length}`);
    done += bytesRead;
  }
  return into;
}
