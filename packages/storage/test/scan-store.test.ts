import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ScanStore } from '../src/index.js';
import { RESERVE_BYTES } from '../src/volume-reserve.js';
import { createdScan, errorCode, tempStore } from './temp-store.js';
import type { TempStore } from './temp-store.js';

describe('ScanStore layout', () => {
  let t: TempStore;
  beforeEach(async () => {
    t = await tempStore();
  });
  afterEach(() => t.cleanup());

  it('init creates scans/ and trash/, sets aside the full-volume reserve and resolves DATA_DIR to its real path', async () => {
    expect((await readdir(t.dataDir)).sort()).toEqual(['incoming', 'reserve.bin', 'scans', 'trash']);
    expect((await stat(join(t.dataDir, 'reserve.bin'))).blocks * 512).toBeGreaterThanOrEqual(RESERVE_BYTES);
    const link = join(t.sandbox, 'data-link');
    await symlink(t.dataDir, link);
    const viaLink = new ScanStore({ dataDir: link });
    await viaLink.init();
    expect(viaLink.dataDir).toBe(t.dataDir);
  });

  it('must be initialised before use', async () => {
    const store = new ScanStore({ dataDir: join(t.sandbox, 'never') });
    expect(() => store.scanDir(randomUUID())).toThrow(/init\(\)/);
    await expect(store.listScanIds()).rejects.toThrow(/init\(\)/);
  });

  it('cancel marker round trip', async () => {
    const id = await createdScan(t.store);
    expect(await t.store.isCancelRequested(id)).toBe(false);
    await t.store.requestCancel(id);
    expect(await t.store.isCancelRequested(id)).toBe(true);
    await t.store.requestCancel(id);
    expect(await t.store.isCancelRequested(id)).toBe(true);
  });

  it('a scan that no longer exists reads as cancelled, and cannot be marked', async () => {
    const id = randomUUID();
    expect(await t.store.isCancelRequested(id)).toBe(true);
    expect(await errorCode(() => t.store.requestCancel(id))).toBe('SCAN_NOT_FOUND');
    expect(await readdir(join(t.dataDir, 'scans'))).toEqual([]);
  });

  it('listScanIds returns real scan folders only', async () => {
    const a = await createdScan(t.store);
    const b = await createdScan(t.store);
    const scans = join(t.dataDir, 'scans');
    await mkdir(join(scans, 'not-a-uuid'));
    await mkdir(join(scans, randomUUID().toUpperCase()));
    await mkdir(join(scans, `.${randomUUID()}`));
    await writeFile(join(scans, randomUUID()), 'a file named like a scan');
    await symlink(t.sandbox, join(scans, randomUUID()));
    expect(await t.store.listScanIds()).toEqual([a, b].sort());
  });

  it('createStaging makes src/ and out/ per attempt; listStaging finds them with attempt and mtime', async () => {
    const id = await createdScan(t.store);
    const one = await t.store.createStaging(id, 1);
    const two = await t.store.createStaging(id, 2);
    expect(one.dir).toMatch(new RegExp(`/scans/${id}/work\\.1\\.[0-9a-f]{16}$`));
    expect((await readdir(one.dir)).sort()).toEqual(['out', 'src']);
    expect([one.srcDir, one.outDir]).toEqual([join(one.dir, 'src'), join(one.dir, 'out')]);

    await mkdir(join(t.store.scanDir(id), 'work.x.abc'));
    await writeFile(join(t.store.scanDir(id), 'work.3.abc'), 'not a folder');
    const listed = await t.store.listStaging(id);
    expect(listed.map((s) => [s.dir, s.attempt])).toEqual(
      [
        [one.dir, 1],
        [two.dir, 2],
      ].sort((x, y) => String(x[0]).localeCompare(String(y[0]))),
    );
    for (const entry of listed) expect(Date.now() - entry.mtime.getTime()).toBeLessThan(60_000);
    expect(await t.store.listStaging(randomUUID())).toEqual([]);
  });

  it('createStaging refuses unknown scans and odd attempt numbers', async () => {
    const id = await createdScan(t.store);
    expect(await errorCode(() => t.store.createStaging(randomUUID(), 1))).toBe('SCAN_NOT_FOUND');
    for (const attempt of [-1, 1.5, Number.NaN]) {
      expect(await errorCode(() => t.store.createStaging(id, attempt)), String(attempt)).toBe('INTERNAL_ERROR');
    }
  });

  it('paths for uploads and API responses', async () => {
    const id = await createdScan(t.store);
    expect(t.store.uploadPath(id)).toBe(join(t.dataDir, 'scans', id, 'upload.zip'));
  });

  it('diskStatus reports free space and a writable volume, leaving no probe behind', async () => {
    const status = await t.store.diskStatus();
    expect(status.writable).toBe(true);
    expect(status.freeBytes).toBeGreaterThan(0);
    expect(status.freeRatio).toBeGreaterThan(0);
    expect(status.freeRatio).toBeLessThanOrEqual(1);
    expect((await readdir(t.dataDir)).sort()).toEqual(['incoming', 'reserve.bin', 'scans', 'trash']);
  });

  it('diskStatus reads a vanished volume as not writable instead of throwing', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'reposcan-vanish-'));
    const store = new ScanStore({ dataDir });
    await store.init();
    await rm(dataDir, { recursive: true });
    expect(await store.diskStatus()).toEqual({ freeRatio: 0, freeBytes: 0, writable: false, readOnly: false });
  });
});
