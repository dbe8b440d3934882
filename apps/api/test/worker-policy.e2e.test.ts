// Redis mode with a worker whose source policy differs from the API's: the worker says at start
// which sources it accepts, and a scan the API accepted and the worker refuses says it was the
// worker's configuration, and which variable, instead of contradicting the API.
import { randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { purgeQueuePrefix } from '@reposcan/queue';
import { postScan, waitCompleted } from './support/scenarios.js';
import { startTestApi } from './support/test-runtime.js';
import type { TestApi } from './support/test-runtime.js';
import { startWorkerProcess } from './support/worker-processes.js';
import type { ServiceProcess } from './support/worker-processes.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** An API on Redis that allows its own local root, and one worker process started with `workerEnv`. */
async function apiAndWorker(
  workerEnv: (api: TestApi) => Record<string, string>,
): Promise<{ api: TestApi; worker: ServiceProcess; prefix: string }> {
  const prefix = `reposcan-test-policy-${randomUUID().slice(0, 8)}`;
  const api = await startTestApi({ REDIS_URL, ROLE: 'api', QUEUE_PREFIX: prefix });
  const worker = await startWorkerProcess({
    REDIS_URL,
    ROLE: 'worker',
    QUEUE_PREFIX: prefix,
    DATA_DIR: api.dataDir,
    WORKER_CONCURRENCY: '1',
    ...workerEnv(api),
  });
  return { api, worker, prefix };
}

async function scanThatTheApiAccepts(api: TestApi): Promise<Record<string, unknown>> {
  const response = await postScan(api, { repo_path: api.repoDir }, '?wait=false');
  expect(response.status).toBe(202);
  const { data } = (await response.json()) as { data: { scan_id: string } };
  return waitCompleted(api, data.scan_id);
}

describe("Redis mode, a worker without the API's ALLOWED_LOCAL_ROOTS", () => {
  const prefix = `reposcan-test-policy-${randomUUID().slice(0, 8)}`;
  let api: TestApi;
  let worker: ServiceProcess | undefined;
  let queuedScanId: string;
  /** When the API last read the live workers: it reads them again only after LIVE_WORKERS_CACHE_MS (2 s). */
  let workersReadAt = 0;

  beforeAll(async () => {
    api = await startTestApi({ REDIS_URL, ROLE: 'api', QUEUE_PREFIX: prefix });
  });
  afterAll(async () => {
    await worker?.stop();
    await api?.close();
    await purgeQueuePrefix(REDIS_URL, prefix);
  });

  it('with no live worker the API accepts a local scan, which waits for one', async () => {
    workersReadAt = Date.now();
    const response = await postScan(api, { repo_path: api.repoDir }, '?wait=false');
    expect(response.status).toBe(202);
    const { data } = (await response.json()) as { data: { scan_id: string; state: string } };
    expect(data.state).toBe('queued');
    queuedScanId = data.scan_id;
  });

  it('the worker says at start that it accepts no local paths, and why', async () => {
    worker = await startWorkerProcess({
      REDIS_URL,
      ROLE: 'worker',
      QUEUE_PREFIX: prefix,
      DATA_DIR: api.dataDir,
      WORKER_CONCURRENCY: '1',
      ALLOWED_LOCAL_ROOTS: '',
    });
    const line = worker.logs.find((l) => String(l.msg).startsWith('this worker accepts'));
    expect(line?.msg).toBe(
      'this worker accepts no local paths (ALLOWED_LOCAL_ROOTS unset); git from github.com, gitlab.com, bitbucket.org, codeberg.org, gitea.com (GIT_ALLOWED_HOSTS), https only (GIT_ALLOW_HTTP=false), public addresses only (GIT_ALLOW_PRIVATE_HOSTS=false); uploaded ZIPs',
    );
  });

  it("it fails the scan that was waiting with a sentence that blames the worker's ALLOWED_LOCAL_ROOTS", async () => {
    const status = await waitCompleted(api, queuedScanId);
    expect(status.state).toBe('failed');
    expect(status.error).toEqual({
      code: 'LOCAL_PATHS_DISABLED',
      message:
        "The API accepted this scan, but the worker that ran it refused it. ALLOWED_LOCAL_ROOTS is unset in the worker's configuration, so the worker refuses every local path. Give every worker the same ALLOWED_LOCAL_ROOTS as the API (in Redis mode each role reads its own environment; see README, Redis mode).",
    });
  });

  it('while it is the only live worker, the API refuses local scans at submit with 503 NO_WORKER_ACCEPTS', async () => {
    // A worker that started and failed the waiting scan within 2 s is not yet in the API's view.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, workersReadAt + 2_500 - Date.now())));
    const response = await postScan(api, { repo_path: api.repoDir }, '?wait=false');
    expect(response.status).toBe(503);
    const body = (await response.json()) as { code: string; detail: string };
    expect(body.code).toBe('NO_WORKER_ACCEPTS');
    expect(body.detail).toBe(
      "This server's API accepts this source, but the one live worker refuses it under its own configuration (ALLOWED_LOCAL_ROOTS), so it was not queued. An operator should give the workers the same ALLOWED_LOCAL_ROOTS as the API.",
    );
  });

  it('once it has stopped, local scans are accepted again', async () => {
    expect(await worker?.stop()).toBe(0);
    const deadline = Date.now() + 10_000;
    let status = 0;
    while (status !== 202 && Date.now() < deadline) {
      status = (await postScan(api, { repo_path: api.repoDir }, '?wait=false')).status;
      if (status !== 202) await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(status).toBe(202);
  });
});

describe('Redis mode, a worker whose ALLOWED_LOCAL_ROOTS is another folder', () => {
  let api: TestApi;
  let worker: ServiceProcess;
  let prefix: string;
  let otherRoot: string;

  beforeAll(async () => {
    ({ api, worker, prefix } = await apiAndWorker((a) => {
      otherRoot = join(a.dataDir, '..', 'elsewhere');
      return { ALLOWED_LOCAL_ROOTS: otherRoot };
    }));
    await mkdir(otherRoot, { recursive: true });
  });
  afterAll(async () => {
    await worker?.stop();
    await api?.close();
    await purgeQueuePrefix(REDIS_URL, prefix);
  });

  it("names its roots at start and fails the scan as outside the worker's ALLOWED_LOCAL_ROOTS", async () => {
    expect(
      worker.logs.some((l) =>
        String(l.msg).startsWith(`this worker accepts local paths under ${otherRoot} (ALLOWED_LOCAL_ROOTS)`),
      ),
    ).toBe(true);
    // The folder is made only after the worker started, which it warned of before it took jobs.
    expect(worker.logs.filter((l) => l.level === 40).map((l) => l.msg)).toContain(
      `ALLOWED_LOCAL_ROOTS names a path that is not a folder here (${otherRoot}); local paths under it are refused (the list is ":"-separated)`,
    );
    const status = await scanThatTheApiAccepts(api);
    expect(status.state).toBe('failed');
    const error = status.error as { code: string; message: string };
    expect(error.code).toBe('OUTSIDE_ALLOWED_ROOTS');
    expect(error.message).toMatch(
      /^The API accepted this scan, but the worker that ran it refused it\. Refused by the worker's configuration \(ALLOWED_LOCAL_ROOTS of the worker\): /,
    );
    expect(error.message).toContain('Give every worker the same ALLOWED_LOCAL_ROOTS as the API');
  });
});
