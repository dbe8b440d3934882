import { chmod, lstat, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { hasCode } from './fs-errors.js';

/**
 * Deletes a tree whatever modes an archive or a clone left in it: a `0o300` folder (no read)
 * cannot be listed and a `0o500` one cannot be emptied, so owner rwx is granted first.
 */
export async function removeTree(root: string): Promise<void> {
  await grantOwnerAccess(root);
  await rm(root, { recursive: true, force: true, maxRetries: 3 });
}

/**
 * Adds u+rwx to every folder under `root`, never following symbolic links (lstat, and Dirent
 * types are those of the links themselves). `chmod` follows links, but it only runs on a path
 * lstat has just seen as a folder, inside trees only this service writes.
 */
export async function grantOwnerAccess(root: string): Promise<void> {
  const pending = [root];
  for (let dir = pending.pop(); dir !== undefined; dir = pending.pop()) {
    try {
      const stats = await lstat(dir);
      if (!stats.isDirectory()) continue;
      if ((stats.mode & 0o700) !== 0o700) await chmod(dir, (stats.mode & 0o7777) | 0o700);
      for (const entry of await readdir(dir, { withFileTypes: true })) {
        if (entry.isDirectory()) pending.push(join(dir, entry.name));
      }
    } catch (error) {
      // Gone already: someone else (another janitor, a concurrent delete) removed it.
      if (!hasCode(error, 'ENOENT')) throw error;
    }
  }
}
