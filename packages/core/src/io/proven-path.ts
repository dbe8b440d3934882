// Where an open file or folder really is. On Linux, /proc/self/fd/<fd> is a link the kernel keeps
// on the open file itself: reading it gives that file's real path now (when a folder on the way
// was swapped for a link, the path the open took shows, not the one asked for), and a path through
// it, `/proc/self/fd/<fd>/<name>`, finds `name` in that very folder, as openat(2) does (Node has
// no openat), whatever was renamed or swapped since the folder was opened. This is how every open of a scan is kept
// inside the scanned tree (README: "What is scanned").
import { closeSync, constants, openSync, readlinkSync } from 'node:fs';
import { readlink } from 'node:fs/promises';
import { hasRawBytes, pathBytesOf } from '../path-bytes.js';

/**
 * The folder of this process's open files: /proc/<pid>/fd, a few microseconds cheaper a lookup than
 * /proc/self/fd (no link to resolve first), when /proc is this process's own; null where there is
 * none that works.
 */
function findFdDir(): string | null {
  if (process.platform !== 'linux') return null;
  try {
    const self = readlinkSync('/proc/self') === String(process.pid) ? `/proc/${process.pid}/fd` : '/proc/self/fd';
    const fd = openSync('/', constants.O_RDONLY | constants.O_DIRECTORY);
    try {
      return readlinkSync(`${self}/${fd}`) === '/' ? self : null;
    } finally {
      closeSync(fd);
    }
  } catch {
    return null;
  }
}

const FD_DIR = findFdDir();

/**
 * Whether opens can be proven here (Linux with /proc mounted). Elsewhere the walk falls back to
 * refusing links at the last component only, and server-local paths are refused.
 */
export const PROVES_PATHS: boolean = FD_DIR !== null;

/** A path that reaches the open file `fd` itself, whatever its name is now. */
export function fdPath(fd: number): string {
  return `${FD_DIR}/${fd}`;
}

/**
 * True when `fd` is open on what lies at `realPath` now (a path as path-bytes.ts carries it, compared
 * byte for byte when it holds a name that is not UTF-8); always true where that cannot be told.
 */
export function isAtSync(fd: number, realPath: string): boolean {
  if (!PROVES_PATHS) return true;
  try {
    if (hasRawBytes(realPath)) return readlinkSync(fdPath(fd), { encoding: 'buffer' }).equals(pathBytesOf(realPath));
    return readlinkSync(fdPath(fd)) === realPath;
  } catch {
    return false;
  }
}

/** isAtSync with an async call, for an event loop that serves something else. */
export async function isAt(fd: number, realPath: string): Promise<boolean> {
  if (!PROVES_PATHS) return true;
  try {
    if (hasRawBytes(realPath))
      return (await readlink(fdPath(fd), { encoding: 'buffer' })).equals(pathBytesOf(realPath));
    return (await readlink(fdPath(fd))) === realPath;
  } catch {
    return false;
  }
}

/** The error a check finds when what opened is not where it was asked for. */
export function movedError(): Error {
  return Object.assign(
    new Error('the entry is not where the scan found it: a folder on the way was moved or swapped for a link'),
    { code: 'EMOVED' },
  );
}
