// The volume misbehaving under a running stack: full, read-only, or holding a corrupt state file.
// A real tmpfs volume is mounted where the machine allows it (these tests are skipped, saying so,
// where it does not); the API runs in this process, workers are real processes on real Redis.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { purgeQueuePrefix } from '@reposcan/queue';
import { postScan, waitCompleted } from './support/scenarios.js';
import { startTestApi } from './support/test-runtime.js';
import type { TestApi } from './support/test-runtime.js';
import { startWorkerProcess } from './support/worker-processes.js';
import type { ServiceProcess } from './support/worker-processes.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

/** Whether this machine lets the tests mount a tmpfs (root, or a user namespace that allows it). */
function canMount(): boolean {
  const probe = join(tmpdir(), `reposcan-mount-probe-${process.pid}`);
  try {
    execFileSync('mkdir', ['-p', probe]);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', probe], { stdio: 'ignore' });
    execFileSync('umount', [probe], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  } finally {
    execFileSync('rm', ['-rf', probe]);
  }
}
const MOUNTS = canMount();
const mountIt = MOUNTS ? it : it.skip;
if (!MOUNTS) console.warn('volume-faults: this machine does not allow mounting a tmpfs; the volume tests are skipped');

/** A fresh tmpfs of `size` mounted for this test; unmounted after it. */
async function tmpfsVolume(size: string): Promise<{ root: string; remount(options: string): void }> {
  const root = await mkdtemp(join(tmpdir(), 'reposcan-volume-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', root], { stdio: 'ignore' });
  cleanups.push(async () => {
    execFileSync('umount', ['-l', root], { stdio: 'ignore' });
    await rm(root, { recursive: true, force: true });
  });
  return { root, remount: (options) => execFileSync('mount', ['-o', `remount,${options}`, root], { stdio: 'ignore' }) };
}

/** Writes zeros into `dir` until the volume refuses one more byte. */
async function fillVolume(dir: string): Promise<string> {
  const filler = join(dir, `filler-${randomUUID()}.bin`);
  await writeFile(filler, Buffer.alloc(0));
  for (let chunk = 1024 * 1024; chunk >= 1;) {
    try {
      await writeFile(filler, Buffer.alloc(chunk), { flag: 'a' });
    } catch {
      chunk = Math.floor(chunk / 2);
    }
  }
  return filler;
}

interface Stack {
  api: TestApi;
  worker: () => Promise<ServiceProcess>;
}

/** An API in this process (ROLE=api) over `dataDir` on its own queue prefix; workers are separate processes. */
async function stack(dataDir: string, env: Record<string, string> = {}): Promise<Stack> {
  const prefix = `reposcan-vol-${randomUUID().slice(0, 8)}`;
  const api = await startTestApi({
    REDIS_URL,
    ROLE: 'api',
    QUEUE_PREFIX: prefix,
    SCAN_WAIT_SECONDS: '0',
    DATA_DIR: dataDir,
    JANITOR_INTERVAL_SECONDS: '1',
    ...env,
  });
  cleanups.push(
    () => api.close(),
    () => purgeQueuePrefix(REDIS_URL, prefix),
  );
  return {
    api,
    worker: async () => {
      const worker = await startWorkerProcess({
        ...env,
        REDIS_URL,
        ROLE: 'worker',
        QUEUE_PREFIX: prefix,
        DATA_DIR: dataDir,
        ALLOWED_LOCAL_ROOTS: api.localRoot,
        WORKER_CONCURRENCY: '1',
        JOB_LOCK_SECONDS: '2',
      });
      cleanups.push(() => worker.stop('SIGKILL'));
      return worker;
    },
  };
}

async function accept(api: TestApi): Promise<string> {
  const response = await postScan(api, { repo_path: api.repoDir, create_zip: true }, '?wait=false');
  expect(response.status).toBe(202);
  return ((await response.json()) as { data: { scan_id: string } }).data.scan_id;
}

interface Status {
  state: string;
  error: { code: string; message: string } | null;
}
async function status(api: TestApi, scanId: string): Promise<Status> {
  return ((await (await fetch(`${api.baseUrl}/v1/scans/${scanId}`)).json()) as { data: Status }).data;
}

describe('a full volume', () => {
  mountIt('scans accepted before it filled up end failed / DISK_FULL, and say so while it is still full', async () => {
    // 5 % of 16 MiB (MIN_FREE_DISK_RATIO) is more than the reserve the store sets aside.
    const volume = await tmpfsVolume('16m');
    const { api, worker } = await stack(join(volume.root, 'data'));
    const scans = [await accept(api), await accept(api), await accept(api)];
    const filler = await fillVolume(volume.root);
    await worker();
    for (const scanId of scans) {
      await expect
        .poll(() => status(api, scanId), { timeout: 30_000, interval: 200 })
        .toMatchObject({ state: 'failed', error: { code: 'DISK_FULL' } });
    }
    // Nothing half-built is left behind on the full volume.
    for (const scanId of scans)
      expect((await readdir(join(volume.root, 'data', 'scans', scanId))).filter((n) => n.startsWith('work.'))).toEqual(
        [],
      );
    await rm(filler);
  });
});

describe('a read-only volume', () => {
  mountIt(
    'new work and DELETE get 507 VOLUME_READ_ONLY saying so, not a 500 or "low on disk space"; both work again once it is writable',
    async () => {
      const volume = await tmpfsVolume('16m');
      const { api, worker } = await stack(join(volume.root, 'data'));
      await worker();
      const done = await accept(api);
      expect((await waitCompleted(api, done, 60_000)).state).toBe('completed');

      volume.remount('ro');
      // The API looks at the volume at most once a second.
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      const refused = await postScan(api, { repo_path: api.repoDir });
      expect(refused.status).toBe(507);
      const body = (await refused.json()) as { code: string; detail: string };
      expect(body.code).toBe('VOLUME_READ_ONLY');
      expect(body.detail).toMatch(/read-only/);
      expect(body.detail).not.toMatch(/low on/);
      const deleted = await fetch(`${api.baseUrl}/v1/cleanup/${done}`, { method: 'DELETE' });
      expect(deleted.status).toBe(507);
      expect(((await deleted.json()) as { code: string }).code).toBe('VOLUME_READ_ONLY');
      // Refused means untouched: the scan and its artifacts are all still there.
      expect((await status(api, done)).state).toBe('completed');

      volume.remount('rw');
      expect((await fetch(`${api.baseUrl}/v1/cleanup/${done}`, { method: 'DELETE' })).status).toBe(200);
      expect((await fetch(`${api.baseUrl}/v1/scans/${done}`)).status).toBe(404);
    },
  );
});

describe('a corrupt state file', () => {
  it('DELETE removes the scan all the same, and the janitor expires one nobody deletes', async () => {
    const { api } = await stack(join(await mkdtemp(join(tmpdir(), 'reposcan-corrupt-')), 'data'), {
      SCAN_TTL_HOURS: '1',
    });
    cleanups.push(() => rm(join(api.dataDir, '..'), { recursive: true, force: true }));
    const deleted = await accept(api);
    const expiring = await accept(api);
    for (const scanId of [deleted, expiring])
      await writeFile(join(api.dataDir, 'scans', scanId, 'state.json'), '{"state": "runn');
    expect((await fetch(`${api.baseUrl}/v1/scans/${deleted}`)).status).toBe(500);

    const response = await fetch(`${api.baseUrl}/v1/cleanup/${deleted}`, { method: 'DELETE' });
    expect(response.status).toBe(200);
    expect(await readdir(join(api.dataDir, 'scans'))).not.toContain(deleted);

    // Two hours old by its files: past SCAN_TTL_HOURS, so the next sweep removes it.
    const past = new Date(Date.now() - 2 * 3_600_000);
    await utimes(join(api.dataDir, 'scans', expiring, 'state.json'), past, past);
    await expect
      .poll(() => readdir(join(api.dataDir, 'scans')), { timeout: 10_000, interval: 200 })
      .not.toContain(expiring);
  });
});
