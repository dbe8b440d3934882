import { randomUUID } from 'node:crypto';
import { chmod, lstat, mkdir, readdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { grantOwnerAccess } from '../src/remove-tree.js';
import { createdScan, errorCode, tempStore } from './temp-store.js';
import type { TempStore } from './temp-store.js';

/** What an archive can leave behind: a write+search-only folder, a mode-0 file, a read-only folder. */
async function plantOddModes(root: string): Promise<void> {
  await mkdir(join(root, 'wx-only', 'deeper'), { recursive: true });
  await writeFile(join(root, 'wx-only', 'deeper', 'file.txt'), 'x');
  await writeFile(join(root, 'wx-only', 'file.txt'), 'x');
  await writeFile(join(root, 'no-mode.txt'), 'x');
  await mkdir(join(root, 'read-only'));
  await writeFile(join(root, 'read-only', 'file.txt'), 'x');
  await chmod(join(root, 'no-mode.txt'), 0o000);
  await chmod(join(root, 'wx-only', 'deeper'), 0o000);
  await chmod(join(root, 'wx-only'), 0o300);
  await chmod(join(root, 'read-only'), 0o500);
}

describe('remove and staging cleanup', () => {
  let t: TempStore;
  beforeEach(async () => {
    t = await tempStore();
  });
  afterEach(() => t.cleanup());

  it('removes a scan whose tree holds a 0o300 folder and a 0o000 file, leaving nothing', async () => {
    const id = await createdScan(t.store);
    const staging = await t.store.createStaging(id, 1);
    await plantOddModes(staging.srcDir);
    await writeFile(t.store.uploadPath(id), 'PK');

    expect(await t.store.remove(id)).toBe(true);
    expect(await readdir(join(t.dataDir, 'scans'))).toEqual([]);
    expect(await readdir(join(t.dataDir, 'trash'))).toEqual([]);
    expect(await t.store.readState(id)).toBeNull();
    expect(await t.store.remove(id)).toBe(false);
  });

  it('grants owner rwx on every folder before deleting (the part root does not need)', async () => {
    const root = join(t.sandbox, 'odd');
    await mkdir(root);
    await plantOddModes(root);
    await grantOwnerAccess(root);
    for (const dir of ['wx-only', 'wx-only/deeper', 'read-only']) {
      expect((await lstat(join(root, dir))).mode & 0o700, dir).toBe(0o700);
    }
    // Files keep their modes: unlinking needs rights on the folder only.
    expect((await lstat(join(root, 'no-mode.txt'))).mode & 0o777).toBe(0o000);
    expect((await lstat(join(root, 'wx-only'))).mode & 0o077).toBe(0o000);
  });

  it('does not follow symlinks out of the scan while deleting', async () => {
    const id = await createdScan(t.store);
    const outside = join(t.sandbox, 'outside');
    await mkdir(join(outside, 'locked'), { recursive: true });
    await writeFile(join(outside, 'keep.txt'), 'keep');
    await chmod(join(outside, 'locked'), 0o300);
    const staging = await t.store.createStaging(id, 1);
    await symlink(outside, join(staging.srcDir, 'link'));

    expect(await t.store.remove(id)).toBe(true);
    expect((await readdir(outside)).sort()).toEqual(['keep.txt', 'locked']);
    expect((await lstat(join(outside, 'locked'))).mode & 0o777).toBe(0o300);
  });

  it('unknown scans are not removed', async () => {
    expect(await t.store.remove(randomUUID())).toBe(false);
  });

  it('removeStaging deletes a staging folder with odd modes and refuses any other path', async () => {
    const id = await createdScan(t.store);
    const staging = await t.store.createStaging(id, 3);
    await plantOddModes(staging.outDir);
    await t.store.removeStaging(staging.dir);
    expect((await readdir(t.store.scanDir(id))).sort()).toEqual(['request.json', 'state.json']);

    const kept = await t.store.createStaging(id, 4);
    for (const dir of [
      t.store.scanDir(id),
      kept.srcDir,
      t.dataDir,
      join(t.dataDir, 'scans'),
      join(t.store.scanDir(id), 'result'),
      join(kept.dir, '..', '..', '..'),
    ]) {
      expect(await errorCode(() => t.store.removeStaging(dir)), dir).toBe('INTERNAL_ERROR');
    }
    expect(await t.store.readState(id)).not.toBeNull();
  });

  it('emptyTrash finishes deletes that a crash interrupted', async () => {
    const leftover = join(t.dataDir, 'trash', `${randomUUID()}.abc`);
    await mkdir(leftover);
    await plantOddModes(leftover);
    expect(await t.store.emptyTrash()).toBe(1);
    expect(await readdir(join(t.dataDir, 'trash'))).toEqual([]);
  });
});
