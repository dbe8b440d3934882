// What an operator scrapes and opens: a real worker process's probes and Prometheus metrics on
// METRICS_PORT, the API's queue gauges, and the read-only queue dashboard. Real Redis, real git
// over loopback, real HTTP.
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { purgeQueuePrefix } from '@reposcan/queue';
import { hasRedisServer } from '../../../packages/queue/test/support/private-redis.js';
import { freePort } from '../../../packages/queue/test/support/redis.js';
import { createFixtures } from '../../../packages/sources/test/remote/helpers/fixture-repos.js';
import type { Fixtures } from '../../../packages/sources/test/remote/helpers/fixture-repos.js';
import { startGitHttpServer } from '../../../packages/sources/test/remote/helpers/git-http-server.js';
import type { GitHttpServer } from '../../../packages/sources/test/remote/helpers/git-http-server.js';
import { p99, probeWhileRunning } from './support/probe-latency.js';
import { sample, scrape } from './support/prometheus.js';
import { postScan, waitCompleted, writeLargeTree } from './support/scenarios.js';
import { startTestApi } from './support/test-runtime.js';
import type { TestApi } from './support/test-runtime.js';
import { startApiProcess, startWorkerProcess } from './support/worker-processes.js';
import type { ServiceProcess } from './support/worker-processes.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const LOOPBACK_GIT = { GIT_ALLOW_HTTP: 'true', GIT_ALLOW_PRIVATE_HOSTS: 'true', GIT_ALLOWED_HOSTS: '127.0.0.1' };

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

interface Stack {
  api: TestApi;
  worker: ServiceProcess;
  /** The worker's METRICS_PORT server. */
  workerUrl: string;
}

async function stack(env: Record<string, string> = {}): Promise<Stack> {
  const prefix = `reposcan-ops-${randomUUID().slice(0, 8)}`;
  const api = await startTestApi({ REDIS_URL, ROLE: 'api', QUEUE_PREFIX: prefix, SCAN_WAIT_SECONDS: '0', ...env });
  cleanups.push(
    () => api.close(),
    () => purgeQueuePrefix(REDIS_URL, prefix),
  );
  const port = await freePort();
  const worker = await startWorkerProcess({
    ...env,
    REDIS_URL,
    ROLE: 'worker',
    QUEUE_PREFIX: prefix,
    DATA_DIR: api.dataDir,
    ALLOWED_LOCAL_ROOTS: api.localRoot,
    WORKER_CONCURRENCY: '1',
    HOST: '127.0.0.1',
    METRICS_PORT: String(port),
  });
  cleanups.push(() => worker.stop('SIGKILL'));
  await worker.waitForLog((line) => line.msg === 'worker metrics and probes listening');
  return { api, worker, workerUrl: `http://127.0.0.1:${port}` };
}

async function accept(api: TestApi, body: Record<string, unknown>): Promise<string> {
  const response = await postScan(api, body, '?wait=false');
  expect(response.status).toBe(202);
  return ((await response.json()) as { data: { scan_id: string } }).data.scan_id;
}

interface Summary {
  total_files: number;
  total_size: number;
  estimated_tokens: number;
}

async function summaryOf(api: TestApi, scanId: string): Promise<Summary> {
  return ((await (await fetch(`${api.baseUrl}/v1/summary/${scanId}`)).json()) as { data: { summary: Summary } }).data
    .summary;
}

describe.runIf(hasRedisServer)('operators: worker probes and metrics, queue gauges, queue dashboard', () => {
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

  it("a worker answers /health and /ready on METRICS_PORT, and anything else with the API's error envelope", async () => {
    const { workerUrl } = await stack();
    const health = await fetch(`${workerUrl}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: 'ok', version: expect.any(String) });
    const ready = await fetch(`${workerUrl}/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({
      status: 'ready',
      checks: { redis: 'ok', volume: 'ok', worker: 'ok' },
      reasons: [],
    });
    const missing = await fetch(`${workerUrl}/v1/scan`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({
      status: 'error',
      code: 'ROUTE_NOT_FOUND',
      detail: expect.stringContaining('/metrics'),
    });
    expect((await fetch(`${workerUrl}/metrics`, { method: 'POST' })).status).toBe(405);
  });

  it.runIf(process.platform === 'linux')(
    'every thread of a worker process runs at WORKER_NICE (default 19), below the API, and 0 keeps normal priority',
    async () => {
      const niceOf = (stat: string): number => Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
      // Node's own threads too (V8's helpers, libuv's pool), which start before any code of ours runs.
      const threadNices = (pid: number | undefined): number[] =>
        readdirSync(`/proc/${pid}/task`).flatMap((tid) => {
          try {
            return [niceOf(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8'))];
          } catch {
            return []; // the thread ended while we listed them
          }
        });
      const { worker } = await stack();
      const own = niceOf(readFileSync(`/proc/${process.pid}/stat`, 'utf8')); // 0 unless the tests themselves run under nice
      const nices = threadNices(worker.child.pid);
      expect(nices.length).toBeGreaterThan(5);
      expect(new Set(nices)).toEqual(new Set([19]));
      expect(niceOf(readFileSync(`/proc/${process.pid}/stat`, 'utf8'))).toBe(own);
      const { worker: normal } = await stack({ WORKER_NICE: '0' });
      // Its tokenizer and io threads still lower themselves; the rest keep the normal priority.
      expect(threadNices(normal.child.pid)).toContain(own);
      expect(niceOf(readFileSync(`/proc/${normal.child.pid}/stat`, 'utf8'))).toBe(own);
    },
  );

  it('the API logs each request with its id at info, and healthy probes and scrapes only at debug', async () => {
    const base = await mkdtemp(join(tmpdir(), 'reposcan-ops-log-'));
    cleanups.push(() => rm(base, { recursive: true, force: true }));
    const port = await freePort();
    const api = await startApiProcess({
      REDIS_URL,
      ROLE: 'api',
      QUEUE_PREFIX: `reposcan-ops-${randomUUID().slice(0, 8)}`,
      DATA_DIR: join(base, 'data'),
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'info',
    });
    cleanups.push(() => api.stop('SIGKILL'));
    const baseUrl = `http://127.0.0.1:${port}`;
    for (const path of ['/health', '/ready', '/metrics']) expect((await fetch(`${baseUrl}${path}`)).status).toBe(200);
    const missing = await fetch(`${baseUrl}/v1/scans/${randomUUID()}`);
    expect(missing.status).toBe(404);
    const line = await api.waitForLog((l) => l.msg === 'request' && l.status === 404);
    expect(line).toMatchObject({ level: 30, method: 'GET', requestId: missing.headers.get('x-request-id') });
    expect(
      api.logs.filter((l) => l.msg === 'request' && ['/health', '/ready', '/metrics'].includes(String(l.path))),
    ).toEqual([]);
  });

  it('worker metrics count scans by terminal state and code, the files, bytes and tokens scanned, clone and scan durations', async () => {
    const { api, workerUrl } = await stack(LOOPBACK_GIT);
    const remote = await accept(api, { repo_path: `${git.origin}/acme/widgets` });
    expect((await waitCompleted(api, remote)).state).toBe('completed');
    const local = await accept(api, { repo_path: api.repoDir });
    expect((await waitCompleted(api, local)).state).toBe('completed');
    const missingBranch = await accept(api, { repo_path: `${git.origin}/acme/widgets/tree/no-such-branch` });
    expect(await waitCompleted(api, missingBranch)).toMatchObject({
      state: 'failed',
      error: { code: 'BRANCH_NOT_FOUND' },
    });
    // The worker records a failure's metrics just after it publishes the state the API reports;
    // a busy (niced) worker may not have got there when the API already answers 'failed'.
    await expect
      .poll(
        async () =>
          sample(await scrape(workerUrl), 'reposcan_scans_finished_total', {
            state: 'failed',
            code: 'BRANCH_NOT_FOUND',
          }),
        { timeout: 10_000, interval: 50 },
      )
      .toBe(1);

    const text = await scrape(workerUrl);
    const summaries = [await summaryOf(api, remote), await summaryOf(api, local)];
    const total = (key: keyof Summary): number => summaries.reduce((sum, s) => sum + s[key], 0);
    expect(sample(text, 'reposcan_scans_finished_total', { state: 'completed', code: '' })).toBe(2);
    expect(sample(text, 'reposcan_scans_finished_total', { state: 'failed', code: 'BRANCH_NOT_FOUND' })).toBe(1);
    expect(sample(text, 'reposcan_scan_attempts_total', { outcome: 'completed' })).toBe(2);
    expect(sample(text, 'reposcan_scan_attempts_total', { outcome: 'failed' })).toBe(1);
    expect(sample(text, 'reposcan_scanned_files_total')).toBe(total('total_files'));
    expect(sample(text, 'reposcan_scanned_bytes_total')).toBe(total('total_size'));
    expect(sample(text, 'reposcan_scanned_tokens_total', { encoding: 'o200k_base' })).toBe(total('estimated_tokens'));
    // One clone got as far as a checkout; both scans ran the engine.
    expect(sample(text, 'reposcan_clone_duration_seconds_count')).toBe(1);
    expect(sample(text, 'reposcan_clone_duration_seconds_sum')).toBeGreaterThan(0);
    expect(sample(text, 'reposcan_scan_duration_seconds_count')).toBe(2);
    expect(sample(text, 'reposcan_scans_running')).toBe(0);
    expect(sample(text, 'reposcan_nodejs_eventloop_lag_p99_seconds')).toBeGreaterThan(0);

    const apiText = await scrape(api.baseUrl);
    expect(sample(apiText, 'reposcan_scans_accepted_total', { source: 'remote' })).toBe(2);
    expect(sample(apiText, 'reposcan_scans_accepted_total', { source: 'local' })).toBe(1);
    expect(
      sample(apiText, 'reposcan_http_request_duration_seconds_count', {
        method: 'POST',
        route: '/v1/scan',
        status: '202',
      }),
    ).toBe(3);
    expect(sample(apiText, 'reposcan_queue_waiting')).toBe(0);
  });

  it('while a clone runs: the worker reports it running and the API counts it active on the queue', async () => {
    const slow = await startGitHttpServer(fixtures.projectRoot, { bytesPerSecond: 32 * 1024 });
    cleanups.push(() => slow.close());
    const { api, workerUrl } = await stack(LOOPBACK_GIT);
    expect(sample(await scrape(api.baseUrl), 'reposcan_queue_active')).toBe(0);
    const scanId = await accept(api, { repo_path: `${slow.origin}/acme/big` });
    await expect
      .poll(async () => sample(await scrape(workerUrl), 'reposcan_scans_running'), { timeout: 30_000, interval: 100 })
      .toBe(1);
    const apiText = await scrape(api.baseUrl);
    expect(sample(apiText, 'reposcan_queue_active')).toBe(1);
    expect(sample(apiText, 'reposcan_queue_waiting')).toBe(0);
    expect((await fetch(`${api.baseUrl}/v1/cleanup/${scanId}`, { method: 'DELETE' })).status).toBe(200);
    await expect
      .poll(async () => sample(await scrape(workerUrl), 'reposcan_scans_running'), { timeout: 15_000, interval: 100 })
      .toBe(0);
    expect(sample(await scrape(workerUrl), 'reposcan_scans_finished_total', { state: 'cancelled', code: '' })).toBe(1);
  });

  it('a worker process keeps answering its probes within 100 ms while it scans a heavy tree', async () => {
    const { api, workerUrl } = await stack();
    const root = await mkdtemp(join(api.localRoot, 'heavy-'));
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    await writeLargeTree(root, 1000, 80_000);
    const scanId = await accept(api, { repo_path: root });
    await expect
      .poll(
        async () =>
          (
            (await (await fetch(`${api.baseUrl}/v1/scans/${scanId}`)).json()) as {
              data: { progress: { phase: string } };
            }
          ).data.progress.phase,
        { timeout: 60_000, interval: 20 },
      )
      .toBe('read');
    const latencies = await probeWhileRunning(
      `${workerUrl}/health`,
      async () => sample(await scrape(workerUrl), 'reposcan_scans_running') === 1,
    );
    expect(latencies.length).toBeGreaterThanOrEqual(100);
    expect(p99(latencies)).toBeLessThan(100);
    expect((await waitCompleted(api, scanId, 120_000)).state).toBe('completed');
  });

  it('ENABLE_QUEUE_DASHBOARD serves a read-only bull-board of the scan and webhook queues at /admin/queues', async () => {
    const prefix = `reposcan-ops-${randomUUID().slice(0, 8)}`;
    const api = await startTestApi({
      REDIS_URL,
      ROLE: 'api',
      QUEUE_PREFIX: prefix,
      SCAN_WAIT_SECONDS: '0',
      ENABLE_QUEUE_DASHBOARD: 'true',
    });
    cleanups.push(
      () => api.close(),
      () => purgeQueuePrefix(REDIS_URL, prefix),
    );
    const page = await fetch(`${api.baseUrl}/admin/queues`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    // No worker runs: the scan waits, and the board shows it.
    await accept(api, { repo_path: api.repoDir });
    const board = (await (await fetch(`${api.baseUrl}/admin/queues/api/queues`)).json()) as {
      queues: Array<{ displayName: string; readOnlyMode: boolean; counts: { waiting: number; prioritized: number } }>;
    };
    expect(board.queues.map((q) => q.displayName).sort()).toEqual(['scans', 'webhooks']);
    // A client's scan carries its fair-share priority: the board lists it as prioritized.
    expect(board.queues.find((q) => q.displayName === 'scans')).toMatchObject({
      readOnlyMode: true,
      counts: { waiting: 0, prioritized: 1 },
    });
    expect(board.queues.find((q) => q.displayName === 'webhooks')?.readOnlyMode).toBe(true);
  });

  it('without the flag, or without Redis, there is no dashboard', async () => {
    const plain = await startTestApi({
      REDIS_URL,
      ROLE: 'api',
      QUEUE_PREFIX: `reposcan-ops-${randomUUID().slice(0, 8)}`,
    });
    cleanups.push(() => plain.close());
    const embedded = await startTestApi({ ENABLE_QUEUE_DASHBOARD: 'true' });
    cleanups.push(() => embedded.close());
    for (const api of [plain, embedded]) {
      const response = await fetch(`${api.baseUrl}/admin/queues`);
      expect(response.status).toBe(404);
      expect(await response.json()).toMatchObject({ code: 'ROUTE_NOT_FOUND' });
    }
  });
});
