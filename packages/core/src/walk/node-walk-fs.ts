// The real file system behind the walk: with async calls for an event loop that serves something
// else, and with blocking calls for a thread of its own (the io threads, the inspect thread), where
// they are several times faster (no promise or libuv round trip per entry).
import { closeSync, constants, lstatSync, openSync, readdirSync, readSync } from 'node:fs';
import { lstat, open, readdir } from 'node:fs/promises';
import { asPromise } from '../io/as-promise.js';
import type { WalkDeps } from './walk-deps.js';

// O_NOFOLLOW: a file swapped for a link after the listing is refused, not followed.
// O_NONBLOCK: a file swapped for a FIFO cannot block the open. Both are absent on Windows.
const READ_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);
const CHUNK_BYTES = 64 * 1024;

// Both readers read in chunks up to the cap: the size lstat reports is not trusted to bound the read.

async function readFileCapped(absPath: string, maxBytes: number): Promise<Uint8Array> {
  const handle = await open(absPath, READ_FLAGS);
  try {
    const chunks: Buffer[] = [];
    let total = 0;
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

function readFileCappedSync(absPath: string, maxBytes: number): Uint8Array {
  const fd = openSync(absPath, READ_FLAGS);
  try {
    const chunks: Buffer[] = [];
    let total = 0;
    while (total < maxBytes) {
      const chunk = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, maxBytes - total));
      const bytesRead = readSync(fd, chunk, 0, chunk.length, null);
      if (bytesRead === 0) break;
      chunks.push(chunk.subarray(0, bytesRead));
      total += bytesRead;
    }
    return Buffer.concat(chunks, total);
  } finally {
    closeSync(fd);
  }
}

export const nodeWalkFs: WalkDeps = {
  readdir: (absPath) => readdir(absPath, { withFileTypes: true }),
  lstat: (absPath) => lstat(absPath),
  readFile: readFileCapped,
};

/** The same with blocking calls behind the async signatures the walk awaits. Never on an event loop that serves anything. */
export const syncWalkFs: WalkDeps = {
  readdir: (absPath) => asPromise(() => readdirSync(absPath, { withFileTypes: true })),
  lstat: (absPath) => asPromise(() => lstatSync(absPath)),
  readFile: (absPath, maxBytes) => asPromise(() => readFileCappedSync(absPath, maxBytes)),
  blocking: true,
};
