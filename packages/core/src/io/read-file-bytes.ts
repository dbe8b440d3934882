import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';

export type ReadOutcome =
  /** `bytes` live in shared memory (`into`, or a new SharedArrayBuffer): token threads read them without a copy. */
  | { ok: true; bytes: Uint8Array }
  | { ok: false; reason: 'too_large' | 'symlink' | 'unreadable' };

/** One file to read into `into`, a view of shared memory sized from the walk (size + 1). */
export interface ReadRequest {
  absPath: string;
  into?: Uint8Array;
}

const FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/**
 * Reads one file once, into `into` when it has room, safely: no symlink is followed
 * (O_NOFOLLOW), FIFOs and devices never block (O_NONBLOCK + a regular-file check on the open
 * handle), and at most `maxBytes` are read whatever the size on disk says (files can grow after
 * the walk; /proc reports 0).
 *
 * Blocking calls, for a thread that has nothing else to do (an io thread, the inspect thread): four
 * system calls a file and no promise or libuv round trip, several times faster than async calls.
 */
export function readFileBytesSync(absPath: string, maxBytes: number, into?: Uint8Array): ReadOutcome {
  let fd: number;
  try {
    fd = openSync(absPath, FLAGS);
  } catch (error) {
    return { ok: false, reason: (error as NodeJS.ErrnoException).code === 'ELOOP' ? 'symlink' : 'unreadable' };
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return { ok: false, reason: 'unreadable' };
    if (stat.size > maxBytes) return { ok: false, reason: 'too_large' };
    // One byte of headroom tells a file that grew past the cap from one that fits exactly.
    const room = Math.min(stat.size, maxBytes) + 1;
    // `into` was sized from the walk; a file that has grown since then gets memory of its own.
    const buffer = into !== undefined && into.length >= room ? into.subarray(0, room) : new Uint8Array(new SharedArrayBuffer(room));
    let filled = 0;
    while (filled < buffer.length) {
      const wanted = buffer.length - filled;
      const bytesRead = readSync(fd, buffer, filled, wanted, filled);
      filled += bytesRead;
      if (bytesRead < wanted) break; // a short read of a regular file is its end
    }
    if (filled > maxBytes) return { ok: false, reason: 'too_large' };
    return { ok: true, bytes: buffer.subarray(0, filled) };
  } catch {
    return { ok: false, reason: 'unreadable' };
  } finally {
    closeSync(fd);
  }
}

/** A batch of reads, one after another, with blocking calls. */
export function readFilesSync(requests: readonly ReadRequest[], maxBytes: number): ReadOutcome[] {
  return requests.map((request) => readFileBytesSync(request.absPath, maxBytes, request.into));
}
