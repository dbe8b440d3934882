import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { fsPath } from '../path-bytes.js';
import { fdPath, isAtSync, PROVES_PATHS } from './proven-path.js';

export type ReadOutcome =
  /** `bytes` live in shared memory (`into`, or a new SharedArrayBuffer): token threads read them without a copy. */
  { ok: true; bytes: Uint8Array } | { ok: false; reason: 'too_large' | 'symlink' | 'unreadable' };

/** One file to read into `into`, a view of shared memory sized from the walk (size + 1). */
export interface ReadRequest {
  /** The file's real path, as the walk found it (carried as path-bytes.ts says). */
  absPath: string;
  into?: Uint8Array;
}

const FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);
const FOLDER_FLAGS = FLAGS | (constants.O_DIRECTORY ?? 0);

const UNREADABLE: ReadOutcome = { ok: false, reason: 'unreadable' };

/**
 * Reads one file once, into `into` when it has room, safely: no symlink is followed
 * (O_NOFOLLOW), FIFOs and devices never block (O_NONBLOCK + a regular-file check on the open
 * handle), and at most `maxBytes` are read whatever the size on disk says (files can grow after
 * the walk; /proc reports 0). `path` reaches the file through its open folder (see readFilesSync).
 */
function readOpen(path: string, maxBytes: number, into: Uint8Array | undefined): ReadOutcome {
  let fd: number;
  try {
    fd = openSync(fsPath(path), FLAGS);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ELOOP' ? { ok: false, reason: 'symlink' } : UNREADABLE;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return UNREADABLE;
    if (stat.size > maxBytes) return { ok: false, reason: 'too_large' };
    // One byte of headroom tells a file that grew past the cap from one that fits exactly.
    const room = Math.min(stat.size, maxBytes) + 1;
    // `into` was sized from the walk; a file that has grown since then gets memory of its own.
    const buffer =
      into !== undefined && into.length >= room ? into.subarray(0, room) : new Uint8Array(new SharedArrayBuffer(room));
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
    return UNREADABLE;
  } finally {
    closeSync(fd);
  }
}

/** The folder the files being read are in: open and proven at `abs`, or -1 when it is not there. */
interface OpenFolder {
  abs: string;
  fd: number;
}

function openFolder(abs: string): OpenFolder {
  let fd: number;
  try {
    fd = openSync(fsPath(abs), FOLDER_FLAGS);
  } catch {
    return { abs, fd: -1 };
  }
  if (isAtSync(fd, abs)) return { abs, fd };
  closeSync(fd);
  return { abs, fd: -1 };
}

/**
 * A batch of reads, one after another, with blocking calls, for a thread that has nothing else to
 * do (an io thread, the inspect thread): no promise or libuv round trip, several times faster than
 * async calls.
 *
 * Every file is opened through its folder, which is opened by its real path and proven to be
 * there first (proven-path.ts): a folder on the way swapped for a link to outside the tree, before
 * or during the reads, makes its files `unreadable`, never read. A batch comes in walk order, so
 * one folder serves the run of its files: a check per file cost a tenth more than the reads.
 */
export function readFilesSync(requests: readonly ReadRequest[], maxBytes: number): ReadOutcome[] {
  if (!PROVES_PATHS) return requests.map((request) => readOpen(request.absPath, maxBytes, request.into));
  const outcomes: ReadOutcome[] = [];
  let folder: OpenFolder | null = null;
  try {
    for (const { absPath, into } of requests) {
      const slash = absPath.lastIndexOf('/');
      const folderAbs = slash === 0 ? '/' : absPath.slice(0, slash);
      if (folder?.abs !== folderAbs) {
        if (folder !== null && folder.fd >= 0) closeSync(folder.fd);
        folder = null; // not closed twice should the open throw
        folder = openFolder(folderAbs);
      }
      outcomes.push(
        folder.fd < 0 || slash < 0
          ? UNREADABLE
          : readOpen(`${fdPath(folder.fd)}/${absPath.slice(slash + 1)}`, maxBytes, into),
      );
    }
  } finally {
    if (folder !== null && folder.fd >= 0) closeSync(folder.fd);
  }
  return outcomes;
}

/** One file, as readFilesSync reads it. */
export function readFileBytesSync(absPath: string, maxBytes: number, into?: Uint8Array): ReadOutcome {
  return readFilesSync([into === undefined ? { absPath } : { absPath, into }], maxBytes)[0] as ReadOutcome;
}
