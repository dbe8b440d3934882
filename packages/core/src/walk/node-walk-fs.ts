// The real file system behind the walk.
import { constants } from 'node:fs';
import { lstat, open, readdir } from 'node:fs/promises';
import type { WalkDeps } from './walk-deps.js';

// O_NOFOLLOW: a file swapped for a link after the listing is refused, not followed.
// O_NONBLOCK: a file swapped for a FIFO cannot block the open. Both are absent on Windows.
const READ_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);
const CHUNK_BYTES = 64 * 1024;

async function readFileCapped(absPath: string, maxBytes: number): Promise<Uint8Array> {
  const handle = await open(absPath, READ_FLAGS);
  try {
    const chunks: Buffer[] = [];
    let total = 0;
    // Read in chunks up to the cap: the size lstat reports is not trusted to bound the read.
    while (total < maxBytes) {
      const chunk = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, maxBytes - total));
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
      if (bytesRead === 0) break;
      chunks.push(chunk.subarray(0, bytesRead));
      total += bytesRead;
    }
    return Buffer.concat(chunks, total);
  } finally {
    await handle.close();
  }
}

export const nodeWalkFs: WalkDeps = {
  readdir: (absPath) => readdir(absPath, { withFileTypes: true }),
  lstat: (absPath) => lstat(absPath),
  readFile: readFileCapped,
};
