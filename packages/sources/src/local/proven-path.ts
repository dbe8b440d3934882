// Where an open file or folder really is (the engine proves its own opens the same way). On
// Linux, /proc/<pid>/fd/<fd> is a link the kernel keeps on the open file itself: reading it gives
// that file's real path now, and a path through it, `/proc/<pid>/fd/<fd>/<name>`, finds `name` in
// that very folder, as openat(2) does (Node has no openat), whatever was renamed or swapped since.
import { closeSync, constants, openSync, readlinkSync } from 'node:fs';
import { readlink } from 'node:fs/promises';

function findFdDir(): string | null {
  if (process.platform !== 'linux') return null;
  try {
    // /proc/<pid> skips resolving the /proc/self link on every use, when /proc is this process's own.
    const dir = readlinkSync('/proc/self') === String(process.pid) ? `/proc/${process.pid}/fd` : '/proc/self/fd';
    const fd = openSync('/', constants.O_RDONLY | constants.O_DIRECTORY);
    try {
      return readlinkSync(`${dir}/${fd}`) === '/' ? dir : null;
    } finally {
      closeSync(fd);
    }
  } catch {
    return null;
  }
}

const FD_DIR = findFdDir();

/** Whether opens can be proven here (Linux with /proc mounted). */
export const PROVES_PATHS: boolean = FD_DIR !== null;

/** A path that reaches the open file `fd` itself, whatever its name is now. */
export function fdPath(fd: number): string {
  return `${FD_DIR}/${fd}`;
}

/** True when `fd` is open on what lies at `realPath` now; always true where that cannot be told. */
export async function isAt(fd: number, realPath: string): Promise<boolean> {
  if (!PROVES_PATHS) return true;
  try {
    return (await readlink(fdPath(fd))) === realPath;
  } catch {
    return false;
  }
}
