// SHA-256 of a file written front to back (an artifact). Hashing 200 MB takes the best part of a
// second on a CPU without SHA instructions, all of it on the thread that renders and writes; a file
// thread can do it instead by reading back what was written (from the page cache), keeping pace
// with the writer, so the digest is ready a moment after the last write. The thread side keeps
// each file's hash and descriptor between requests, so every request for one file goes to one
// thread, which answers them in order.
import { createHash } from 'node:crypto';
import type { Hash } from 'node:crypto';
import { closeSync, constants, openSync, readSync } from 'node:fs';

/** The SHA-256 of a file being appended to: told of each append once it is written. */
export interface AppendedFileHash {
  /** `data` was appended and is written; the file is now `length` bytes long. */
  appended(data: Uint8Array, length: number): void;
  /** The hex digest of everything appended; call once, after the last append. */
  digest(): Promise<string>;
  /** Lets go of an unfinished hash (the file is being removed); resolves once its file is closed. */
  drop(): Promise<void>;
}

/** Makes the hash of the file at `path`, which is empty when the hash is made. */
export type HashAppendedFile = (path: string) => AppendedFileHash;

/** Hashes the appended bytes as they are given, on the caller's thread. */
export function hashOnThisThread(): AppendedFileHash {
  const hash = createHash('sha256');
  return {
    appended: (data) => {
      hash.update(data);
    },
    digest: () => Promise.resolve(hash.digest('hex')),
    drop: () => Promise.resolve(),
  };
}

// The thread side: the files this thread hashes, by the id their caller gave them.

interface Reading {
  fd: number;
  hash: Hash;
  /** Bytes hashed so far. */
  at: number;
}

const READ_BYTES = 1 << 20;
const reading = new Map<number, Reading>();
let buffer: Buffer | null = null;

/** Hashes file `id` (at `path`) on to `length`, reading back what its writer has written. */
export function hashUpTo(id: number, path: string, length: number): void {
  let file = reading.get(id);
  if (file === undefined) {
    file = { fd: openSync(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0)), hash: createHash('sha256'), at: 0 };
    reading.set(id, file);
  }
  buffer ??= Buffer.allocUnsafe(READ_BYTES);
  try {
    while (file.at < length) {
      const bytesRead = readSync(file.fd, buffer, 0, Math.min(buffer.length, length - file.at), file.at);
      if (bytesRead === 0) throw new Error(`${path} ended at ${file.at} bytes, before the ${length} its writer wrote`);
      file.hash.update(buffer.subarray(0, bytesRead));
      file.at += bytesRead;
    }
  } catch (error) {
    endHash(id);
    throw error;
  }
}

/** Ends file `id`'s hash: its hex digest, or null when this thread does not hash it (any more). */
export function endHash(id: number): string | null {
  const file = reading.get(id);
  if (file === undefined) return null;
  reading.delete(id);
  closeSync(file.fd);
  return file.hash.digest('hex');
}
