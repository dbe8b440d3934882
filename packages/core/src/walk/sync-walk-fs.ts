// The walk's file system with blocking calls, for a thread of its own (the io threads, the
// inspect thread): no promise or libuv round trip per entry, several times faster than the
// async calls on a warm page cache. Never use it on an event loop that serves anything.
import { closeSync, constants, lstatSync, openSync, readdirSync, readSync } from 'node:fs';
import { asPromise } from '../io/as-promise.js';
import type { WalkDeps } from './walk-deps.js';

const READ_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);
const CHUNK_BYTES = 64 * 1024;

function readFileCappedSync(absPath: string, maxBytes: number): Uint8Array {
  const fd = openSync(absPath, READ_FLAGS);
  try {
    const chunks: Buffer[] = [];
    let total = 0;
    // Read in chunks up to the cap: the size lstat reports is not trusted to bound the read.
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

// Async signatures (the walk awaits them) over sync calls.
export const syncWalkFs: WalkDeps = {
  readdir: (absPath) => asPromise(() => readdirSync(absPath, { withFileTypes: true })),
  lstat: (absPath) => asPromise(() => lstatSync(absPath)),
  readFile: (absPath, maxBytes) => asPromise(() => readFileCappedSync(absPath, maxBytes)),
};
