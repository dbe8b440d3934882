import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineScanScenarios } from './support/scenarios.js';
import { startTestApi } from './support/test-runtime.js';
import type { TestApi } from './support/test-runtime.js';
import { startWorkerProcess } from './support/worker-processes.js';
import type { ServiceProcess } from './support/worker-processes.js';
import { purgeQueuePrefix } from '@reposcan/queue';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('end to end, BullMQ on Redis with the API and two separate worker processes', () => {
  const prefix = `reposcan-test-${randomUUID().slice(0, 8)}`;
  let api: TestApi;
  const workers: ServiceProcess[] = [];

  beforeAll(async () => {
    api = await startTestApi({ REDIS_URL, ROLE: 'api', QUEUE_PREFIX: prefix });
    const env = {
      REDIS_URL,
      ROLE: 'worker',
      QUEUE_PREFIX: prefix,
      DATA_DIR: api.dataDir,
      ALLOWED_LOCAL_ROOTS: api.localRoot,
      WORKER_CONCURRENCY: '2',
    };
    workers.push(...(await Promise.all([startWorkerProcess(env), startWorkerProcess(env)])));
  });
  afterAll(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await api?.close();
    await purgeQueuePrefix(REDIS_URL, prefix);
  });

  defineScanScenarios(() => api);

  it('shared the work between both workers and published every scan exactly once', () => {
    const completed = workers.flatMap((w) =>
      w.logs.filter((l) => l.msg === 'scan completed').map((l) => String(l.scanId)),
    );
    expect(new Set(completed).size).toBe(completed.length);
    expect(workers.every((w) => w.logs.some((l) => l.msg === 'scan completed'))).toBe(true);
    expect(
      workers.flatMap((w) => w.logs).filter((l) => String(l.msg).startsWith('another attempt published first')),
    ).toEqual([]);
  });

  it('workers stop cleanly on SIGTERM', async () => {
    const codes = await Promise.all(workers.map((w) => w.stop('SIGTERM')));
    expect(codes).toEqual([0, 0]);
  });
});
