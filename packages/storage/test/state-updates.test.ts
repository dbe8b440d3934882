import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, readdir, symlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ScanStateRecord } from '@reposcan/contracts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ScanStore } from '../src/index.js';
import { createdScan, errorCode, stateRecord, tempStore } from './temp-store.js';
import type { TempStore } from './temp-store.js';

const REQUEST = { repo_path: 'https://github.com/octocat/Hello-World' };

describe('scan state on disk', () => {
  let t: TempStore;
  beforeEach(async () => {
    t = await tempStore();
  });
  afterEach(() => t.cleanup());

  it('create writes request.json and state.json, and they read back', async () => {
    const id = randomUUID();
    const record = stateRecord(id);
    await t.store.create(id, REQUEST, record);
    expect(await t.store.readState(id)).toEqual(record);
    expect(await t.store.readRequest(id)).toEqual(REQUEST);
    // No temp files are left behind by the atomic writes.
    expect((await readdir(t.store.scanDir(id))).sort()).toEqual(['request.json', 'state.json']);
  });

  it('create refuses an existing scan folder and a record of another scan', async () => {
    const id = await createdScan(t.store);
    expect(await errorCode(() => t.store.create(id, REQUEST, stateRecord(id)))).toBe('INTERNAL_ERROR');
    const other = randomUUID();
    expect(await errorCode(() => t.store.create(other, REQUEST, stateRecord(id)))).toBe('INTERNAL_ERROR');
    expect(await t.store.listScanIds()).toEqual([id]);
  });

  it('unknown scans read as null and cannot be updated', async () => {
    const id = randomUUID();
    expect(await t.store.readState(id)).toBeNull();
    expect(await errorCode(() => t.store.readRequest(id))).toBe('SCAN_NOT_FOUND');
    expect(await errorCode(() => t.store.updateState(id, (s) => s))).toBe('SCAN_NOT_FOUND');
  });

  it('the state stamp moves with every state write, even one of the same size, and is null once the scan is gone', async () => {
    const id = await createdScan(t.store);
    const stamps = [await t.store.stateStamp(id)];
    for (const done of [1, 2, 3]) {
      await t.store.updateState(id, (s) => ({
        ...s,
        state: 'running',
        progress: { phase: 'read', files_done: done, files_total: 3 },
      }));
      stamps.push(await t.store.stateStamp(id));
    }
    expect(new Set(stamps).size).toBe(4);
    // Unchanged state, unchanged stamp.
    expect(await t.store.stateStamp(id)).toBe(stamps.at(-1));
    await t.store.remove(id);
    expect(await t.store.stateStamp(id)).toBeNull();
    expect(await t.store.stateStamp(randomUUID())).toBeNull();
  });

  it('a folder without state.json (a crash during accept) counts as unknown', async () => {
    const id = randomUUID();
    await mkdir(join(t.dataDir, 'scans', id));
    expect(await t.store.readState(id)).toBeNull();
  });

  it('a corrupt state.json is an INTERNAL_ERROR that names the file', async () => {
    const id = await createdScan(t.store);
    const file = join(t.store.scanDir(id), 'state.json');
    await writeFile(file, '{"version":1,"scan_');
    await expect(t.store.readState(id)).rejects.toMatchObject({
      code: 'INTERNAL_ERROR',
      message: `scans/${id}/state.json is corrupt: not valid JSON.`,
    });
    await writeFile(file, JSON.stringify({ ...stateRecord(id), state: 'exploded' }));
    await expect(t.store.readState(id)).rejects.toMatchObject({
      code: 'INTERNAL_ERROR',
      message: expect.stringMatching(/corrupt: state: /) as unknown,
    });
  });

  it('concurrent updates in one process all apply, in call order', async () => {
    const id = await createdScan(t.store);
    const bump = (s: ScanStateRecord): ScanStateRecord => ({
      ...s,
      progress: { ...s.progress, files_done: s.progress.files_done + 1 },
    });
    const results = await Promise.all(Array.from({ length: 100 }, () => t.store.updateState(id, bump)));
    expect(results.map((r) => r.progress.files_done)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    expect((await t.store.readState(id))?.progress.files_done).toBe(100);
  });

  it('two stores on one volume (two workers) lose no update: every increment from both lands', async () => {
    const id = await createdScan(t.store);
    const other = new ScanStore({ dataDir: t.dataDir });
    await other.init();
    const bump = (s: ScanStateRecord): ScanStateRecord => ({
      ...s,
      progress: { ...s.progress, files_done: s.progress.files_done + 1 },
    });
    await Promise.all([
      ...Array.from({ length: 40 }, () => t.store.updateState(id, bump)),
      ...Array.from({ length: 40 }, () => other.updateState(id, bump)),
    ]);
    expect((await t.store.readState(id))?.progress.files_done).toBe(80);
    expect(await readdir(t.store.scanDir(id))).not.toContain('state.lock');
  });

  it('a stale progress write from another worker cannot put a completed scan back to running', async () => {
    const stalled = new ScanStore({ dataDir: t.dataDir });
    await stalled.init();
    // The race needs the completing write to land inside the other worker's read-modify-write: try it on several scans.
    const ids = await Promise.all(Array.from({ length: 10 }, () => createdScan(t.store, { state: 'running' })));
    await Promise.all(
      ids.map(async (id, n) => {
        let finished = false;
        const progress = (async () => {
          for (let i = 1; !finished; i++) {
            await stalled.updateState(id, (s) =>
              s.state === 'running' ? { ...s, progress: { phase: 'read', files_done: i, files_total: 1000 } } : null,
            );
          }
        })();
        await new Promise((resolve) => setTimeout(resolve, 5 + n * 3));
        await t.store.updateState(id, (s) => ({ ...s, state: 'completed', completed_at: new Date().toISOString() }));
        finished = true;
        await progress;
      }),
    );
    for (const id of ids) expect((await t.store.readState(id))?.state, id).toBe('completed');
  });

  it('a state.lock left by a worker that died is broken once stale, and the update goes through', async () => {
    const id = await createdScan(t.store);
    const lock = join(t.store.scanDir(id), 'state.lock');
    await writeFile(lock, 'dead worker');
    const old = new Date(Date.now() - 60_000);
    await utimes(lock, old, old);
    expect((await t.store.updateState(id, (s) => ({ ...s, state: 'running' }))).state).toBe('running');
    expect((await readdir(t.store.scanDir(id))).sort()).toEqual(['request.json', 'state.json']);
  });

  it('a reader never sees a partial state.json while a writer replaces it 200 times', async () => {
    const id = await createdScan(t.store);
    const file = join(t.store.scanDir(id), 'state.json');
    // Long enough that a non-atomic write would be observed half-done.
    const padding = 'x'.repeat(64 * 1024);
    let writing = true;
    const writer = (async () => {
      for (let i = 1; i <= 200; i++) {
        await t.store.updateState(id, (s) => ({
          ...s,
          state: 'running',
          error: null,
          source: { type: 'remote', url: `https://h/${i}/${padding}` },
        }));
      }
      writing = false;
    })();
    let reads = 0;
    while (writing) {
      const record = await t.store.readState(id);
      expect(record?.scan_id).toBe(id);
      JSON.parse(await readFile(file, 'utf8'));
      reads++;
    }
    await writer;
    expect(reads).toBeGreaterThan(10);
    expect((await t.store.readState(id))?.source.url).toBe(`https://h/200/${padding}`);
  });

  it('sets updated_at on every change and writes nothing when mutate returns null', async () => {
    const id = await createdScan(t.store, { updated_at: '2020-01-01T00:00:00.000Z' });
    const unchanged = await t.store.updateState(id, () => null);
    expect(unchanged.updated_at).toBe('2020-01-01T00:00:00.000Z');
    const changed = await t.store.updateState(id, (s) => ({ ...s, state: 'running' }));
    expect(changed.updated_at > '2020-01-01T00:00:00.000Z').toBe(true);
    expect(await t.store.readState(id)).toEqual(changed);
  });

  it.each(['completed', 'failed', 'cancelled'] as const)(
    '%s is final: a late attempt cannot change it',
    async (terminal) => {
      const id = await createdScan(t.store);
      const final = await t.store.updateState(id, (s) => ({
        ...s,
        state: terminal,
        completed_at: new Date().toISOString(),
      }));
      let called = false;
      const after = await t.store.updateState(id, (s) => {
        called = true;
        return { ...s, state: 'failed', error: { code: 'WORKER_CRASHED', message: 'late duplicate' } };
      });
      expect(called).toBe(false);
      expect(after).toEqual(final);
      expect(await t.store.readState(id)).toEqual(final);
    },
  );

  it('mutate works on a copy: changing it in place and returning null changes nothing', async () => {
    const id = await createdScan(t.store);
    const result = await t.store.updateState(id, (s) => {
      s.state = 'failed';
      return null;
    });
    expect(result.state).toBe('queued');
    expect((await t.store.readState(id))?.state).toBe('queued');
  });

  it('an invalid next record or a throwing mutate leaves the file alone and later updates still run', async () => {
    const id = await createdScan(t.store);
    const before = await t.store.readState(id);
    expect(await errorCode(() => t.store.updateState(id, (s) => ({ ...s, attempt: -1 })))).toBe('INTERNAL_ERROR');
    expect(await errorCode(() => t.store.updateState(id, (s) => ({ ...s, scan_id: randomUUID() })))).toBe(
      'INTERNAL_ERROR',
    );
    await expect(
      t.store.updateState(id, () => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await t.store.readState(id)).toEqual(before);
    expect((await t.store.updateState(id, (s) => ({ ...s, state: 'running' }))).state).toBe('running');
  });

  it('a scan folder that is a symlink counts as unknown', async () => {
    const real = await createdScan(t.store);
    const elsewhere = join(t.sandbox, 'elsewhere');
    await mkdir(elsewhere);
    await writeFile(join(elsewhere, 'state.json'), JSON.stringify(stateRecord(randomUUID())));
    const linked = randomUUID();
    await symlink(elsewhere, join(t.dataDir, 'scans', linked));
    // A link to a genuine scan folder is no better.
    const aliased = randomUUID();
    await symlink(t.store.scanDir(real), join(t.dataDir, 'scans', aliased));

    for (const id of [linked, aliased]) {
      expect(await t.store.readState(id)).toBeNull();
      expect(await errorCode(() => t.store.updateState(id, (s) => s))).toBe('SCAN_NOT_FOUND');
      expect(await errorCode(() => t.store.createStaging(id, 1))).toBe('SCAN_NOT_FOUND');
      expect(await t.store.remove(id)).toBe(false);
    }
    expect(await t.store.listScanIds()).toEqual([real]);
    expect(await readdir(elsewhere)).toEqual(['state.json']);
  });
});

describe('state change announcements', () => {
  it('onStateChanged hears of every write and the removal of state.json, once each, after the fact', async () => {
    const sandbox = await tempStore();
    try {
      const seen: Array<{ id: string; state: string | null }> = [];
      // A second store on the same volume, as a worker process has: it announces what it writes.
      // What is on disk at the moment of the call: the write (or removal) is already done.
      const onDisk = (id: string): string | null => {
        const file = join(store.scanDir(id), 'state.json');
        return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { state: string }).state : null;
      };
      const store: ScanStore = new ScanStore({
        dataDir: sandbox.dataDir,
        onStateChanged: (id) => seen.push({ id, state: onDisk(id) }),
      });
      await store.init();
      const id = randomUUID();
      await store.create(id, REQUEST, stateRecord(id));
      await store.updateState(id, (r) => ({ ...r, state: 'running' }));
      // No change, no announcement.
      await store.updateState(id, () => null);
      await store.remove(id);
      expect(seen).toEqual([
        { id, state: 'queued' },
        { id, state: 'running' },
        { id, state: null },
      ]);
    } finally {
      await sandbox.cleanup();
    }
  });
});
