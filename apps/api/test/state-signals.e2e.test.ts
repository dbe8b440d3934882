import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { purgeQueuePrefix } from '@reposcan/queue';
import { readEvents } from './support/sse.js';
import { startTestApi } from './support/test-runtime.js';
import type { TestApi } from './support/test-runtime.js';
import { startWorkerProcess } from './support/worker-processes.js';
import type { ServiceProcess } from './support/worker-processes.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

// With the state poll set to ten minutes, only the state signals can tell a waiting POST or an
// event stream that the scan is over: without them the POST sleeps through the whole of
// SCAN_WAIT_SECONDS before it looks again, and the stream never sees `completed`.
const NO_POLL = { statePollMs: 600_000 };
const WAIT_SECONDS = 15;
const WAIT = { SCAN_WAIT_SECONDS: String(WAIT_SECONDS) };

interface Envelope {
  status: string;
  data: { scan_id: string; state?: string; num_textual_files?: number; events_url?: string };
}

async function postScan(api: TestApi, query = ''): Promise<{ status: number; body: Envelope }> {
  const response = await fetch(`${api.baseUrl}/v1/scan${query}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ repo_path: api.repoDir }),
  });
  return { status: response.status, body: (await response.json()) as Envelope };
}

function defineSignalScenarios(getApi: () => TestApi): void {
  it('a waiting POST answers with the result as soon as the worker finishes, not when its wait runs out', async () => {
    const started = Date.now();
    const { status, body } = await postScan(getApi());
    expect(status).toBe(201);
    expect(body.data.num_textual_files).toBeGreaterThan(0);
    // Not a speed target: the scan takes well under a second; only a missed signal takes the whole wait.
    expect(Date.now() - started).toBeLessThan(WAIT_SECONDS * 1000);
  });

  it('an event stream reports every state up to completed as it happens', async () => {
    const api = getApi();
    const { status, body } = await postScan(api, '?wait=false');
    expect(status).toBe(202);
    const events = await readEvents(`${api.baseUrl}${body.data.events_url}`, WAIT_SECONDS * 1000);
    const states = events.filter((e) => e.event === 'state').map((e) => (e.data as { state: string }).state);
    expect(states.at(-1)).toBe('completed');
  });
}

describe('state signals, embedded mode: the worker in the API process wakes its waiters', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi(WAIT, NO_POLL);
  });
  afterAll(async () => {
    await api?.close();
  });
  defineSignalScenarios(() => api);
});

describe('state signals over Redis: a worker process wakes the API process waiting on its scan', () => {
  const prefix = `reposcan-test-${randomUUID().slice(0, 8)}`;
  let api: TestApi;
  let worker: ServiceProcess | undefined;
  beforeAll(async () => {
    api = await startTestApi({ ...WAIT, REDIS_URL, ROLE: 'api', QUEUE_PREFIX: prefix }, NO_POLL);
    worker = await startWorkerProcess({
      REDIS_URL,
      ROLE: 'worker',
      QUEUE_PREFIX: prefix,
      DATA_DIR: api.dataDir,
      ALLOWED_LOCAL_ROOTS: api.localRoot,
    });
  });
  afterAll(async () => {
    await worker?.stop();
    await api?.close();
    await purgeQueuePrefix(REDIS_URL, prefix);
  });
  defineSignalScenarios(() => api);
});
