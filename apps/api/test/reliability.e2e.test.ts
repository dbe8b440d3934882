// Nothing lost under crashes, restarts, overload and full disks (docs/operations.md): real worker and
// API processes, real Redis (a private redis-server where a test stops it), real signals, a real
// full volume where the machine can mount one. FAULT_INJECTION stops a process in a known phase
// so a kill lands where the test means it to.
import { execFile, execFileSync } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { purgeQueuePrefix } from '@reposcan/queue';
import { readZip } from '../../../packages/core/test/scan/read-zip.js';
import { hasRedisServer, PrivateRedis } from '../../../packages/queue/test/support/private-redis.js';
import { freePort } from '../../../packages/queue/test/support/redis.js';
import { createFixtures } from '../../../packages/sources/test/remote/helpers/fixture-repos.js';
import type { Fixtures } from '../../../packages/sources/test/remote/helpers/fixture-repos.js';
import { startGitHttpServer } from '../../../packages/sources/test/remote/helpers/git-http-server.js';
import type { GitHttpServer } from '../../../packages/sources/test/remote/helpers/git-http-server.js';
import { processesMentioning } from '../../../packages/sources/test/remote/helpers/processes.js';
import { postScan, waitCompleted, writeLargeTree } from './support/scenarios.js';
import { SAMPLE_REPO, startTestApi } from './support/test-runtime.js';
import type { TestApi } from './support/test-runtime.js';
import { startApiProcess, startWorkerProcess } from './support/worker-processes.js';
import type { ServiceProcess } from './support/worker-processes.js';
import { buildZip } from './support/zips.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const execFileAsync = promisify(execFile);
/** Remote scans against the loopback git server: allowed for these tests only. */
const LOOPBACK_GIT = { GIT_ALLOW_HTTP: 'true', GIT_ALLOW_PRIVATE_HOSTS: 'true', GIT_ALLOWED_HOSTS: '127.0.0.1' };

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

interface Stack {
  api: TestApi;
  /** A real ROLE=worker process on this stack's queue and volume; killed after the test. */
  worker: (extra?: Record<string, string>) => Promise<ServiceProcess>;
}

/** An API in this process (ROLE=api) on its own queue prefix; workers are separate processes. */
async function stack(env: Record<string, string> = {}): Promise<Stack> {
  const redisUrl = env.REDIS_URL ?? REDIS_URL;
  const prefix = `reposcan-rel-${randomUUID().slice(0, 8)}`;
  const api = await startTestApi({
    REDIS_URL: redisUrl,
    ROLE: 'api',
    QUEUE_PREFIX: prefix,
    SCAN_WAIT_SECONDS: '0',
    ...env,
  });
  cleanups.push(
    () => api.close(),
    () => purgeQueuePrefix(redisUrl, prefix),
  );
  const base = {
    ...env,
    REDIS_URL: redisUrl,
    ROLE: 'worker',
    QUEUE_PREFIX: prefix,
    DATA_DIR: api.dataDir,
    ALLOWED_LOCAL_ROOTS: api.localRoot,
    WORKER_CONCURRENCY: '1',
    JOB_LOCK_SECONDS: '2',
  };
  return {
    api,
    worker: async (extra = {}) => {
      const process = await startWorkerProcess({ ...base, ...extra });
      cleanups.push(() => process.stop('SIGKILL'));
      return process;
    },
  };
}

/** A private redis-server with an append-only file (jobs survive its restart); stopped after the test. */
async function durableRedis(): Promise<PrivateRedis> {
  const aofDir = await mkdtemp(join(tmpdir(), 'reposcan-aof-'));
  const redis = await PrivateRedis.start({ appendOnlyDir: aofDir });
  cleanups.push(
    () => rm(aofDir, { recursive: true, force: true }),
    () => redis.down(),
  );
  return redis;
}

async function accept(api: TestApi, body: Record<string, unknown>): Promise<string> {
  const response = await postScan(api, body, '?wait=false');
  expect(response.status).toBe(202);
  return ((await response.json()) as { data: { scan_id: string } }).data.scan_id;
}

async function uploadAccept(api: TestApi): Promise<string> {
  const zip = await buildZip(join(api.dataDir, '..', `${randomUUID()}.zip`), {
    'demo-main/README.md': '# Demo\n',
    'demo-main/src/app.py': 'print("hi")\n',
  });
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(zip)]), 'demo.zip');
  const response = await fetch(`${api.baseUrl}/v1/upload?wait=false&create_zip=true`, { method: 'POST', body: form });
  expect(response.status).toBe(202);
  return ((await response.json()) as { data: { scan_id: string } }).data.scan_id;
}

interface StatusData {
  state: string;
  attempt: number;
  progress: { phase: string };
  error: { code: string } | null;
  result: { artifacts: Record<string, { url: string; bytes: number; sha256: string }> } | null;
}

async function status(baseUrl: string, scanId: string): Promise<StatusData> {
  return ((await (await fetch(`${baseUrl}/v1/scans/${scanId}`)).json()) as { data: StatusData }).data;
}

/**
 * A completed scan whose artifacts are whole and consistent: every download matches its
 * recorded sha256, and the bundle's manifest.json describes exactly the bytes of every entry,
 * the three outputs inside it included. A mix of two attempts could not pass.
 */
async function expectWholeResult(api: TestApi, scanId: string): Promise<void> {
  const data = await status(api.baseUrl, scanId);
  expect(data.state).toBe('completed');
  const artifacts = data.result?.artifacts ?? {};
  const downloads = new Map<string, Buffer>();
  for (const [format, artifact] of Object.entries(artifacts)) {
    const bytes = Buffer.from(await (await fetch(`${api.baseUrl}${artifact.url}`)).arrayBuffer());
    expect(sha256(bytes), format).toBe(artifact.sha256);
    downloads.set(format, bytes);
  }
  const zipFile = join(api.dataDir, '..', `${scanId}.zip`);
  await writeFile(zipFile, downloads.get('zip') ?? Buffer.alloc(0));
  const entries = await readZip(zipFile);
  const manifest = JSON.parse((entries.get('manifest.json') ?? Buffer.from('{}')).toString()) as {
    files: Array<{ path: string; bytes: number; sha256: string }>;
  };
  expect(manifest.files).toHaveLength(entries.size - 1);
  for (const file of manifest.files)
    expect(sha256(entries.get(file.path) ?? Buffer.alloc(0)), file.path).toBe(file.sha256);
  for (const format of ['txt', 'md', 'json'])
    expect(entries.get(`output.${format}`)?.equals(downloads.get(format) ?? Buffer.alloc(1)), format).toBe(true);
}

interface BurstAnswer {
  status: number;
  retryAfter: string | null;
  code?: string;
  scanId?: string;
}

/** `count` POST /v1/scan?wait=false at once, sent from a child process. */
async function burst(baseUrl: string, body: Record<string, unknown>, count: number): Promise<BurstAnswer[]> {
  const script = `
    const answers = await Promise.all(Array.from({ length: ${count} }, async () => {
      const response = await fetch(${JSON.stringify(`${baseUrl}/v1/scan?wait=false`)}, { method: 'POST', headers: { 'content-type': 'application/json' }, body: ${JSON.stringify(JSON.stringify(body))} });
      const json = await response.json();
      return { status: response.status, retryAfter: response.headers.get('retry-after'), code: json.code, scanId: json.data?.scan_id };
    }));
    process.stdout.write(JSON.stringify(answers));`;
  const { stdout } = await execFileAsync(process.execPath, ['--input-type=module', '-e', script], {
    maxBuffer: 16 * 1024 * 1024,
  });
  return JSON.parse(stdout) as BurstAnswer[];
}

describe.runIf(hasRedisServer)('reliability: real processes, real Redis', () => {
  let fixtures: Fixtures;
  let git: GitHttpServer;
  beforeAll(async () => {
    fixtures = createFixtures();
    git = await startGitHttpServer(fixtures.projectRoot);
  });
  afterAll(async () => {
    await git?.close();
    fixtures?.cleanup();
  });

  it.each(['clone', 'extract', 'scan', 'publish'] as const)(
    'a worker killed (kill -9) at %s: the other one completes the scan exactly once, as attempt 2',
    async (phase) => {
      const { api, worker } = await stack(LOOPBACK_GIT);
      const victim = await worker({ FAULT_INJECTION: `${phase}:block` });
      const scanId =
        phase === 'clone'
          ? await accept(api, { repo_path: `${git.origin}/acme/widgets`, create_zip: true })
          : phase === 'extract'
            ? await uploadAccept(api)
            : await accept(api, { repo_path: api.repoDir, create_zip: true });
      await victim.waitForStderr(`fault injection: block at ${phase}`);
      expect(await status(api.baseUrl, scanId)).toMatchObject({ state: 'running', attempt: 1 });
      const survivor = await worker();
      await victim.stop('SIGKILL');
      await expect
        .poll(async () => (await status(api.baseUrl, scanId)).attempt, { timeout: 60_000, interval: 50 })
        .toBe(2);
      expect(await waitCompleted(api, scanId, 90_000)).toMatchObject({ state: 'completed', attempt: 2 });
      await expectWholeResult(api, scanId);
      // The log line follows the state write; under load it may arrive a moment later.
      await expect
        .poll(() => survivor.logs.filter((l) => l.msg === 'scan completed' && l.scanId === scanId).length, {
          timeout: 10_000,
        })
        .toBe(1);
    },
  );

  it('a worker blocked past its lock while another takes the scan over: one whole result, never a mix', async () => {
    const { api, worker } = await stack();
    const blocked = await worker({ FAULT_INJECTION: 'publish:block=8000' });
    const scanId = await accept(api, { repo_path: api.repoDir, create_zip: true });
    await blocked.waitForStderr('fault injection: block at publish');
    const other = await worker();
    expect((await waitCompleted(api, scanId, 90_000)).state).toBe('completed');
    // Both attempts reach publish; whichever comes second finds the result there and discards its own.
    const discarded = (l: Record<string, unknown>): boolean =>
      l.scanId === scanId && String(l.msg).startsWith('another attempt published first');
    await expect
      .poll(() => [...blocked.logs, ...other.logs].filter(discarded).length, { timeout: 60_000, interval: 200 })
      .toBe(1);
    // The discarding attempt logs before it writes the final state again, and a progress write it
    // started before the other attempt finished can briefly put `running` back (state.json is
    // read-modified-written per process, not locked across workers): wait for the state to settle.
    await expect
      .poll(async () => (await status(api.baseUrl, scanId)).state, { timeout: 30_000, interval: 100 })
      .toBe('completed');
    await expectWholeResult(api, scanId);
  });

  it('a scan that kills its worker every time ends failed / WORKER_CRASHED, without an endless requeue', async () => {
    const { api, worker } = await stack();
    const poison = join(api.localRoot, 'poison-repo');
    await cp(SAMPLE_REPO, poison, { recursive: true });
    const fault = { FAULT_INJECTION: 'scan:crash@poison' };
    // A supervisor restarts crashed workers, as an orchestrator would.
    let crashes = 0;
    let supervising = true;
    cleanups.push(() => {
      supervising = false;
      return Promise.resolve();
    });
    const supervise = (process: ServiceProcess): void => {
      void process.exited.then(async ({ signal }) => {
        if (signal !== 'SIGKILL' || !supervising) return;
        crashes++;
        supervise(await worker(fault));
      });
    };
    supervise(await worker(fault));
    supervise(await worker(fault));
    const scanId = await accept(api, { repo_path: poison });
    const final = await waitCompleted(api, scanId, 120_000);
    expect(final).toMatchObject({ state: 'failed', error: { code: 'WORKER_CRASHED' } });
    expect(await api.runtime.transport.queue.jobState(scanId)).toBe('failed');
    await sleep(5_000); // time for an endless requeue to show itself
    // Every run killed its worker (a job may stall once and run again: two runs), and the state counts each one.
    expect(crashes).toBe(2);
    expect(await status(api.baseUrl, scanId)).toMatchObject({ state: 'failed', attempt: crashes });
  });

  it('Redis killed while scans are queued and running, then restarted (append-only file): every accepted scan ends; meanwhile 503 at once and /health stays up', async () => {
    const redis = await durableRedis();
    const { api, worker } = await stack({ REDIS_URL: redis.url });
    await worker();
    const large = join(api.localRoot, 'large');
    await writeLargeTree(large, 300, 60_000);
    const ids = [await accept(api, { repo_path: large })];
    for (let i = 0; i < 5; i++) ids.push(await accept(api, { repo_path: api.repoDir }));
    await expect
      .poll(async () => (await status(api.baseUrl, ids[0] ?? '')).state, { timeout: 30_000, interval: 50 })
      .toBe('running');

    await redis.down();
    const started = Date.now();
    const refused = await postScan(api, { repo_path: api.repoDir });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(refused.status).toBe(503);
    expect(((await refused.json()) as { code: string }).code).toBe('QUEUE_UNAVAILABLE');
    expect((await fetch(`${api.baseUrl}/health`)).status).toBe(200);
    await sleep(3_000);
    await redis.up();

    for (const id of ids) expect((await waitCompleted(api, id, 120_000)).state, id).toBe('completed');
  });

  it('DELETE refused with 503 while Redis is down changes nothing: the scan runs to completion once Redis is back', async () => {
    const redis = await durableRedis();
    const { api, worker } = await stack({ REDIS_URL: redis.url });
    const scanId = await accept(api, { repo_path: api.repoDir, create_zip: true });

    await redis.down();
    const refused = await fetch(`${api.baseUrl}/v1/cleanup/${scanId}`, { method: 'DELETE' });
    expect(refused.status).toBe(503);
    expect(((await refused.json()) as { code: string }).code).toBe('QUEUE_UNAVAILABLE');
    expect(await readdir(join(api.dataDir, 'scans', scanId))).not.toContain('cancel');
    expect((await status(api.baseUrl, scanId)).state).toBe('queued');

    await redis.up();
    await worker();
    expect((await waitCompleted(api, scanId, 60_000)).state).toBe('completed');
    await expectWholeResult(api, scanId);
  });

  it('a running scan whose job Redis lost (restarted without an append-only file, its worker gone too) ends failed / QUEUE_LOST, not as a worker crash', async () => {
    const redis = await PrivateRedis.start();
    cleanups.push(() => redis.down());
    const { api, worker } = await stack({ REDIS_URL: redis.url, JANITOR_INTERVAL_SECONDS: '1' });
    const running = await worker({ FAULT_INJECTION: 'scan:block' });
    const scanId = await accept(api, { repo_path: api.repoDir });
    await running.waitForStderr('fault injection: block at scan');
    await running.stop('SIGKILL');
    await redis.down();
    await redis.up();
    const final = await waitCompleted(api, scanId, 30_000);
    expect(final).toMatchObject({ state: 'failed', error: { code: 'QUEUE_LOST' } });
  });

  it('the API killed between recording a scan and enqueueing it: the janitor of the next API brings it to a terminal state', async () => {
    const base = await mkdtemp(join(tmpdir(), 'reposcan-accept-crash-'));
    const dataDir = join(base, 'data');
    const localRoot = join(base, 'repos');
    await cp(SAMPLE_REPO, join(localRoot, 'sample'), { recursive: true });
    const prefix = `reposcan-rel-${randomUUID().slice(0, 8)}`;
    const port = await freePort();
    const env = {
      REDIS_URL,
      QUEUE_PREFIX: prefix,
      DATA_DIR: dataDir,
      ALLOWED_LOCAL_ROOTS: localRoot,
      LOG_LEVEL: 'info',
    };
    const apiEnv = {
      ...env,
      ROLE: 'api',
      HOST: '127.0.0.1',
      PORT: String(port),
      SCAN_WAIT_SECONDS: '0',
      JANITOR_INTERVAL_SECONDS: '1',
    };
    cleanups.push(
      () => rm(base, { recursive: true, force: true }),
      () => purgeQueuePrefix(REDIS_URL, prefix),
    );
    const baseUrl = `http://127.0.0.1:${port}`;

    const doomed = await startApiProcess({ ...apiEnv, FAULT_INJECTION: 'accept:crash' });
    cleanups.push(() => doomed.stop('SIGKILL'));
    const worker = await startWorkerProcess({ ...env, ROLE: 'worker', WORKER_CONCURRENCY: '1' });
    cleanups.push(() => worker.stop('SIGKILL'));
    const answer = await fetch(`${baseUrl}/v1/scan`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ repo_path: join(localRoot, 'sample') }),
    }).catch(() => null);
    expect(answer).toBeNull(); // the process died before answering
    expect((await doomed.exited).signal).toBe('SIGKILL');
    const [scanId] = await readdir(join(dataDir, 'scans'));
    expect(JSON.parse(await readFile(join(dataDir, 'scans', scanId ?? '', 'state.json'), 'utf8'))).toMatchObject({
      state: 'queued',
    });

    const revived = await startApiProcess(apiEnv);
    cleanups.push(() => revived.stop('SIGKILL'));
    expect((await waitCompleted({ baseUrl }, scanId ?? '', 60_000)).state).toBe('completed');
    expect(revived.logs.some((l) => l.scanId === scanId && String(l.msg).startsWith('janitor: re-enqueued'))).toBe(
      true,
    );
  });

  it('cleanup during a running clone: the scan is gone from the volume and the queue, and no git process is left', async () => {
    const slow = await startGitHttpServer(fixtures.projectRoot, { bytesPerSecond: 64 * 1024 });
    cleanups.push(() => slow.close());
    const { api, worker } = await stack(LOOPBACK_GIT);
    await worker();
    const scanId = await accept(api, { repo_path: `${slow.origin}/acme/big` });
    await expect
      .poll(() => processesMentioning(slow.origin).length, { timeout: 30_000, interval: 50 })
      .toBeGreaterThan(0);
    expect(await status(api.baseUrl, scanId)).toMatchObject({ state: 'running', progress: { phase: 'clone' } });

    const deleted = await fetch(`${api.baseUrl}/v1/cleanup/${scanId}`, { method: 'DELETE' });
    expect(deleted.status).toBe(200);
    expect((await fetch(`${api.baseUrl}/v1/scans/${scanId}`)).status).toBe(404);
    await expect.poll(() => processesMentioning(slow.origin), { timeout: 15_000, interval: 100 }).toEqual([]);
    await expect
      .poll(() => api.runtime.transport.queue.jobState(scanId), { timeout: 15_000, interval: 100 })
      .toBe('absent');
    await expect.poll(() => readdir(join(api.dataDir, 'scans')), { timeout: 15_000, interval: 100 }).toEqual([]);
  });

  it('SIGTERM during a clone longer than the grace: the worker exits 0 at once, hands the scan back without using an attempt, and another worker completes it', async () => {
    const slow = await startGitHttpServer(fixtures.projectRoot, { bytesPerSecond: 32 * 1024 });
    cleanups.push(() => slow.close());
    const { api, worker } = await stack(LOOPBACK_GIT);
    const leaving = await worker({ SHUTDOWN_GRACE_SECONDS: '1' });
    const scanId = await accept(api, { repo_path: `${slow.origin}/acme/big`, create_zip: true });
    await expect
      .poll(() => processesMentioning(slow.origin).length, { timeout: 30_000, interval: 50 })
      .toBeGreaterThan(0);
    expect(await status(api.baseUrl, scanId)).toMatchObject({
      state: 'running',
      attempt: 1,
      progress: { phase: 'clone' },
    });

    const signalled = Date.now();
    expect(await leaving.stop('SIGTERM')).toBe(0);
    expect(Date.now() - signalled).toBeLessThan(10_000);
    expect(leaving.logs.some((l) => String(l.msg).startsWith('shutdown grace over'))).toBe(true);
    // Its git was killed with it, and the scan waits in the queue for the next worker.
    expect(processesMentioning(slow.origin)).toEqual([]);
    expect(await api.runtime.transport.queue.jobState(scanId)).toBe('waiting');
    // And it says so: queued again, not `running` with its progress frozen.
    expect(await status(api.baseUrl, scanId)).toMatchObject({
      state: 'queued',
      attempt: 1,
      progress: { phase: 'queued', files_done: 0 },
    });

    slow.setBytesPerSecond(undefined);
    await worker();
    const final = await waitCompleted(api, scanId, 60_000);
    expect(final).toMatchObject({ state: 'completed', attempt: 1 });
    await expectWholeResult(api, scanId);
  });

  it('a full volume: the scan that fills it fails DISK_FULL, finished scans stay whole, new work gets 507', async () => {
    // A real 16 MiB volume where the machine allows mounting one; an injected ENOSPC otherwise.
    const mountPoint = await mkdtemp(join(tmpdir(), 'reposcan-small-volume-'));
    let mounted = false;
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=16m', 'tmpfs', mountPoint], { stdio: 'ignore' });
      mounted = true;
    } catch {
      // no privilege to mount: fall back below
    }
    cleanups.push(async () => {
      if (mounted) execFileSync('umount', ['-l', mountPoint], { stdio: 'ignore' });
      await rm(mountPoint, { recursive: true, force: true });
    });
    const dataDir = join(mountPoint, 'data');
    const { api, worker } = await stack({ DATA_DIR: dataDir, ...(mounted ? {} : { MIN_FREE_DISK_RATIO: '0' }) });
    await worker(mounted ? {} : { FAULT_INJECTION: 'publish:enospc@huge' });

    const small = await accept(api, { repo_path: api.repoDir, create_zip: true });
    expect((await waitCompleted(api, small, 60_000)).state).toBe('completed');
    // About 12 MB of text: its three outputs cannot fit in what is left of 16 MiB.
    const huge = join(api.localRoot, 'huge-repo');
    await writeLargeTree(huge, 150, 80_000);
    const failing = await accept(api, { repo_path: huge });
    expect(await waitCompleted(api, failing, 90_000)).toMatchObject({ state: 'failed', error: { code: 'DISK_FULL' } });
    expect((await readdir(join(dataDir, 'scans', failing))).filter((name) => name.startsWith('work.'))).toEqual([]);
    await expectWholeResult(api, small);

    if (mounted) {
      // Leave less free space than MIN_FREE_DISK_RATIO (5 %): new work is refused before it starts.
      const filler = join(dataDir, 'filler.bin');
      await writeFile(filler, Buffer.alloc(0));
      for (let chunk = Buffer.alloc(1024 * 1024); ;) {
        const free = Number(execFileSync('df', ['--output=avail', '-B1', dataDir]).toString().split('\n')[1]);
        if (free < 0.04 * 16 * 1024 * 1024) break;
        if (free < chunk.length) chunk = Buffer.alloc(Math.max(4096, free - 64 * 1024));
        await writeFile(filler, chunk, { flag: 'a' });
      }
      // The API looks at the volume at most once a second; the last look (accepting the scan that
      // failed) may be younger than that when the huge scan fails fast.
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      const refused = await postScan(api, { repo_path: api.repoDir });
      expect(refused.status).toBe(507);
      expect(((await refused.json()) as { code: string }).code).toBe('DISK_FULL');
      await rm(filler);
    }
  });

  it("200 scan requests at once: the excess is refused with 429 or 503 and Retry-After, every accepted scan finishes, the API's event loop stays responsive", async () => {
    // The API runs as its own process, as in production, and reports its own event-loop lag on
    // /metrics (the window since the previous scrape); the clients run in another process.
    const base = await mkdtemp(join(tmpdir(), 'reposcan-burst-'));
    const prefix = `reposcan-rel-${randomUUID().slice(0, 8)}`;
    const port = await freePort();
    const env = {
      REDIS_URL,
      QUEUE_PREFIX: prefix,
      DATA_DIR: join(base, 'data'),
      ALLOWED_LOCAL_ROOTS: join(base, 'repos'),
    };
    await cp(SAMPLE_REPO, join(base, 'repos', 'sample'), { recursive: true });
    cleanups.push(
      () => rm(base, { recursive: true, force: true }),
      () => purgeQueuePrefix(REDIS_URL, prefix),
    );
    const api = await startApiProcess({
      ...env,
      ROLE: 'api',
      HOST: '127.0.0.1',
      PORT: String(port),
      SCAN_WAIT_SECONDS: '0',
      RATE_LIMIT_PER_MINUTE: '150',
      MAX_QUEUED_SCANS: '40',
    });
    cleanups.push(() => api.stop('SIGKILL'));
    for (let i = 0; i < 2; i++) {
      const worker = await startWorkerProcess({ ...env, ROLE: 'worker', WORKER_CONCURRENCY: '1' });
      cleanups.push(() => worker.stop('SIGKILL'));
    }
    const baseUrl = `http://127.0.0.1:${port}`;
    const lagSeconds = async (): Promise<{ p90: number; max: number }> => {
      const text = await (await fetch(`${baseUrl}/metrics`)).text();
      const gauge = (name: string): number =>
        Number(new RegExp(`^reposcan_nodejs_eventloop_lag_${name}_seconds (\\S+)$`, 'm').exec(text)?.[1]);
      return { p90: gauge('p90'), max: gauge('max') };
    };
    // The same measure (prom-client's precision) of this test's own, idle event loop over the same
    // window: what the shared cores impose on any process is not the API's doing.
    const machine = monitorEventLoopDelay({ resolution: 10 });
    await lagSeconds(); // starts the window
    machine.enable();

    const answers = await burst(baseUrl, { repo_path: join(base, 'repos', 'sample') }, 200);
    const lag = await lagSeconds();
    machine.disable();
    const machineP90 = machine.percentile(90) / 1e9;

    const count = (status: number): number => answers.filter((a) => a.status === status).length;
    expect(count(202) + count(429) + count(503)).toBe(200);
    expect(count(202)).toBeGreaterThanOrEqual(40);
    expect(count(429)).toBe(50);
    expect(count(503)).toBeGreaterThan(0);
    for (const refused of answers.filter((a) => a.status !== 202)) {
      expect(Number(refused.retryAfter)).toBeGreaterThan(0);
      expect(refused.code).toBe(refused.status === 429 ? 'RATE_LIMITED' : 'QUEUE_FULL');
    }
    // The burst lasts a second or two: some 150 delays, so a p99 is the second-worst one, and the
    // shared cores alone push that past 100 ms now and then. Most delays must stay near an idle
    // loop's; the worst (all 200 requests landing in one tick, about 0.2 s here) has its own bound.
    expect(lag.p90, `the API's p90 lag, with an idle loop's at ${machineP90} s`).toBeLessThan(0.05 + machineP90);
    expect(lag.max, "the API's longest lag").toBeLessThan(1);
    const accepted = answers.filter((a) => a.status === 202).map((a) => a.scanId ?? '');
    for (const id of accepted) expect((await waitCompleted({ baseUrl }, id, 120_000)).state).toBe('completed');
  });
});
