import { chmod, lstat, readdir, rm } from 'node:fs/promises';
import path from 'node:path';

/**
 * Removes everything inside `directory`, keeping the folder itself. Folders are made
 * traversable first (u+rwx): as a non-root user, a folder without write or search permission
 * cannot be emptied. Links are never followed.
 */
export async function emptyDirectory(directory: string): Promise<void> {
  for (const name of await readdir(directory)) {
    const child = path.join(directory, name);
    await makeRemovable(child);
    await rm(child, { recursive: true, force: true });
  }
}

async function makeRemovable(target: string): Promise<void> {
  const stats = await lstat(target);
  if (!stats.isDirectory()) return;
  await chmod(target, (stats.mode & 0o7777) | 0o700);
  for (const name of await readdir(target)) {
    await makeRemovable(path.join(target, name));
  }
}
