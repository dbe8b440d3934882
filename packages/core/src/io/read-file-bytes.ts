import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { open } from 'node:fs/promises';

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

// The same rules, whether the calls are async (an event loop to keep free) or sync (a thread of
// its own): no symlink is followed (O_NOFOLLOW), FIFOs and devices never block (O_NONBLOCK + a
// regular-file check on the open handle), and at most `maxBytes` are read whatever the size on
// disk says (files can grow after the walk; /proc reports 0).

function openFailure(error: unknown): ReadOutcome {
  return { ok: false, reason: (error as NodeJS.ErrnoException).code === 'ELOOP' ? 'symlink' : 'unreadable' };
}

/** Where the read goes, or why there is none: one byte of headroom tells a file that grew past the cap from one that fits exactly. */
function target(stat: { isFile(): boolean; size: number }, maxBytes: number, into: Uint8Array | undefined): Uint8Array | ReadOutcome {
  if (!stat.isFile()) return { ok: false, reason: 'unreadable' };
  if (stat.size > maxBytes) return { ok: false, reason: 'too_large' };
  const room = Math.min(stat.size, maxBytes) + 1;
  // `into` was sized from the walk; a file that has grown since then gets memory of its own.
  return into !== undefined && into.length >= room ? into.subarray(0, room) : new Uint8Array(new SharedArrayBuffer(room));
}

/** What a buffer holds once reads stop: all of the file, or proof that it outgrew the cap. */
function filledOutcome(buffer: Uint8Array, filled: number, maxBytes: number): ReadOutcome {
  if (filled > maxBytes) return { ok: false, reason: 'too_large' };
  return { ok: true, bytes: buffer.subarray(0, filled) };
}

/** Reads one file once, into `into` when it has room. */
export async function readFileBytes(absPath: string, maxBytes: number, into?: Uint8Array): Promise<ReadOutcome> {
  let handle;
  try {
    handle = await open(absPath, FLAGS);
  } catch (error) {
    return openFailure(error);
  }
  try {
    const buffer = target(await handle.stat(), maxBytes, into);
    if (!(buffer instanceof Uint8Array)) return buffer;
    let filled = 0;
    while (filled < buffer.length) {
      const wanted = buffer.length - filled;
      const { bytesRead } = await handle.read(buffer, filled, wanted, filled);
      filled += bytesRead;
      if (bytesRead < wanted) break; // a short read of a regular file is its end
    }
    return filledOutcome(buffer, filled, maxBytes);
  } catch {
    return { ok: false, reason: 'unreadable' };
  } finally {
    await handle.close();
  }
}

/**
 * `readFileBytes` with blocking calls, for a thread that has nothing else to do: four system
 * calls a file and no promise or libuv round trip, several times faster on a warm page cache.
 */
export function readFileBytesSync(absPath: string, maxBytes: number, into?: Uint8Array): ReadOutcome {
  let fd: number;
  try {
    fd = openSync(absPath, FLAGS);
  } catch (error) {
    return openFailure(error);
  }
  try {
    const buffer = target(fstatSync(fd), maxBytes, into);
    if (!(buffer instanceof Uint8Array)) return buffer;
    let filled = 0;
    while (filled < buffer.length) {
      const wanted = buffer.length - filled;
      const bytesRead = readSync(fd, buffer, filled, wanted, filled);
      filled += bytesRead;
      if (bytesRead < wanted) break; // a short read of a regular file is its end
    }
    return filledOutcome(buffer, filled, maxBytes);
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

/** A batch of reads through any single-file reader (tests inject failing ones). */
export function readEachFile(readFile: (absPath: string, maxBytes: number, into?: Uint8Array) => Promise<ReadOutcome>): (requests: readonly ReadRequest[], maxBytes: number) => Promise<ReadOutcome[]> {
  return (requests, maxBytes) => Promise.all(requests.map((request) => readFile(request.absPath, maxBytes, request.into)));
}
