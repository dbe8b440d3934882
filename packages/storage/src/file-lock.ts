import { randomBytes } from 'node:crypto';
import { link, lstat, open, rename, rm } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { hasCode } from './fs-errors.js';
import { readIfExists } from './read-if-exists.js';

export interface FileLockOptions {
  /** A lock older than this was left by a process that died (or froze) inside its critical section. */
  staleMs: number;
  /** Give up waiting after this long. */
  waitMs: number;
}

export interface HeldLock {
  /** False once another process broke this lock as stale: whatever was read under it may be outdated. */
  stillHeld(): Promise<boolean>;
}

export class LockTimeoutError extends Error {}

/**
 * Mutual exclusion between processes sharing a volume (several workers and API processes on one
 * DATA_DIR): a lock file created with O_EXCL that holds a random token, removed when `task`
 * settles. A lock older than `staleMs` is broken, so a crashed holder blocks others only that long;
 * a holder that merely froze finds out through `stillHeld()` before it writes.
 * Rejects with ENOENT when the lock's folder does not exist.
 */
export async function withFileLock<T>(
  path: string,
  options: FileLockOptions,
  task: (lock: HeldLock) => Promise<T>,
): Promise<T> {
  const token = randomBytes(12).toString('hex');
  await acquire(path, token, options);
  try {
    return await task({ stillHeld: async () => (await readIfExists(path)) === token });
  } finally {
    if ((await readIfExists(path)) === token) await rm(path, { force: true });
  }
}

async function acquire(path: string, token: string, { staleMs, waitMs }: FileLockOptions): Promise<void> {
  const deadline = Date.now() + waitMs;
  for (let pause = 2; ; pause = Math.min(pause * 2, 50)) {
    let handle;
    try {
      handle = await open(path, 'wx');
    } catch (error) {
      if (!hasCode(error, 'EEXIST')) throw error;
    }
    if (handle !== undefined) {
      try {
        await handle.writeFile(token);
        return;
      } catch (error) {
        // A full disk: leave no empty lock for everyone else to wait out.
        await rm(path, { force: true });
        throw error;
      } finally {
        await handle.close();
      }
    }
    if (await breakIfStale(path, staleMs)) continue;
    if (Date.now() >= deadline) throw new LockTimeoutError(`${path} stayed locked for ${waitMs} ms.`);
    await sleep(pause + Math.random() * pause);
  }
}

/**
 * Moves a stale lock aside under a name of its own, so two processes breaking the same lock cannot
 * both succeed. If what was moved turns out to be a fresh lock taken in between, it is linked back
 * (link fails rather than replace a newer one; that holder's `stillHeld()` then says no).
 */
async function breakIfStale(path: string, staleMs: number): Promise<boolean> {
  const seen = await lstat(path).catch(() => null);
  if (seen === null) return true;
  if (Date.now() - seen.mtimeMs < staleMs) return false;
  const aside = `${path}.stale.${randomBytes(6).toString('hex')}`;
  try {
    await rename(path, aside);
  } catch (error) {
    if (hasCode(error, 'ENOENT')) return true;
    throw error;
  }
  const moved = await lstat(aside);
  if (moved.ino !== seen.ino) await link(aside, path).catch(() => undefined);
  await rm(aside, { force: true });
  return true;
}
