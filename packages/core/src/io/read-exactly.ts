import { Buffer } from 'node:buffer';
import type { FileHandle } from 'node:fs/promises';

/** Bytes [at, at + length) of the file (a read may return less than asked); `what` names it when it is shorter. */
export async function readExactly(handle: FileHandle, at: number, length: number, what: string): Promise<Buffer> {
  return readExactlyInto(handle, at, Buffer.allocUnsafe(length), what);
}

/** readExactly into `into`, as many bytes as it holds. */
export async function readExactlyInto<T extends Uint8Array>(
  handle: FileHandle,
  at: number,
  into: T,
  what: string,
): Promise<T> {
  const length = into.length;
  for (let done = 0; done < length;) {
    const { bytesRead } = await handle.read(into, done, length - done, at + done);
    if (bytesRead === 0) throw new Error(`${what} ended before byte ${at + length}`);
    done += bytesRead;
  }
  return into;
}
