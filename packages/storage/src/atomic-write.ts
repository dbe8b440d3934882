import { randomBytes } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { hasCode } from './fs-errors.js';

/**
 * Replaces `path` so that readers see the old content or the new, never a mix, and the new
 * content survives a crash: temp file in the same folder (rename is atomic only within one
 * file system) → fsync → rename → fsync the folder.
 */
export async function writeFileAtomic(path: string, data: string | Uint8Array, mode = 0o666): Promise<void> {
  const dir = dirname(path);
  const temp = join(dir, `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    const handle = await open(temp, 'wx', mode);
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
  await fsyncDir(dir);
}

/**
 * Makes creates and renames inside `dir` durable. Some file systems (and Windows) refuse to
 * open or fsync a directory; the rename has happened all the same, so that is not an error.
 */
export async function fsyncDir(dir: string): Promise<void> {
  let handle;
  try {
    handle = await open(dir, 'r');
    await handle.sync();
  } catch (error) {
    if (!hasCode(error, 'EINVAL', 'EISDIR', 'EPERM', 'ENOTSUP')) throw error;
  } finally {
    await handle?.close();
  }
}

/** fsyncs the regular files directly inside `dir`, then `dir` itself: done before publishing it by rename. */
export async function fsyncFiles(dir: string, names: readonly string[]): Promise<void> {
  for (const name of names) {
    const handle = await open(join(dir, name), 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  }
  await fsyncDir(dir);
}
