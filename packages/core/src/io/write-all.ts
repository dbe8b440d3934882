import type { FileHandle } from 'node:fs/promises';

/** Writes all of `data` at the handle's current position (a write may take less than asked). */
export async function writeAll(handle: FileHandle, data: Uint8Array): Promise<void> {
  for (let offset = 0; offset < data.byteLength;) {
    const { bytesWritten } = await handle.write(data, offset, data.byteLength - offset);
    offset += bytesWritten;
  }
}
