import { readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LockTimeoutError, withFileLock } from '../src/file-lock.js';
import { tempStore } from './temp-store.js';
import type { TempStore } from './temp-store.js';

const TIMING = { staleMs: 10_000, waitMs: 5_000 };

describe('withFileLock', () => {
  let t: TempStore;
  let lock: string;
  beforeEach(async () => {
    t = await tempStore();
    lock = join(t.sandbox, 'x.lock');
  });
  afterEach(() => t.cleanup());

  it('runs holders one at a time and leaves no file behind', async () => {
    let inside = 0;
    let most = 0;
    await Promise.all(
      Array.from({ length: 8 }, () =>
        withFileLock(lock, TIMING, async () => {
          most = Math.max(most, ++inside);
          await sleep(5);
          inside--;
        }),
      ),
    );
    expect(most).toBe(1);
    expect(await readdir(t.sandbox)).not.toContain('x.lock');
  });

  it('waits for a live holder, and gives up after waitMs', async () => {
    await writeFile(lock, 'someone else');
    await expect(
      withFileLock(lock, { staleMs: 10_000, waitMs: 150 }, () => Promise.resolve('ran')),
    ).rejects.toBeInstanceOf(LockTimeoutError);
    let settled = false;
    const waiting = withFileLock(lock, TIMING, () => Promise.resolve('ran')).finally(() => (settled = true));
    await sleep(100);
    expect(settled).toBe(false);
    await rm(lock);
    expect(await waiting).toBe('ran');
  });

  it('breaks a lock left by a process that died, and tells a frozen holder it lost the lock', async () => {
    await writeFile(lock, 'dead process');
    const old = new Date(Date.now() - 60_000);
    await utimes(lock, old, old);
    expect(await withFileLock(lock, TIMING, () => Promise.resolve('ran'))).toBe('ran');

    const held = withFileLock(lock, { staleMs: 50, waitMs: 5_000 }, async (mine) => {
      await sleep(300); // frozen past staleMs: another process breaks the lock meanwhile
      return await mine.stillHeld();
    });
    await sleep(20);
    const other = withFileLock(lock, { staleMs: 50, waitMs: 5_000 }, async (mine) => await mine.stillHeld());
    expect(await other).toBe(true);
    expect(await held).toBe(false);
    expect(await readdir(t.sandbox)).not.toContain('x.lock');
  });

  it('rejects with ENOENT when the folder is gone', async () => {
    await expect(
      withFileLock(join(t.sandbox, 'missing', 'x.lock'), TIMING, () => Promise.resolve('ran')),
    ).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
