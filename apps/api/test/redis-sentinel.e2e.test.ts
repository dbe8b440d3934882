// The service behind Redis Sentinel (a master, one replica, three sentinels on loopback ports):
// the master is killed (SIGKILL) in the middle of scans, the sentinels promote the replica, and
// the API and the worker follow it; every scan that was accepted completes.
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { hasRedisServer } from '../../../packages/queue/test/support/private-redis.js';
import { enqueueScan, waitCompleted } from './support/scenarios.js';
import { redisGroup, SENTINEL_MASTER_NAME, startSentinels, waitUntil } from './support/redis-servers.js';
import type { TestSentinels } from './support/redis-servers.js';
import { startTestApi } from './support/test-runtime.js';
import type { TestApi } from './support/test-runtime.js';
import { startWorkerProcess } from './support/worker-processes.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

async function state(api: TestApi, id: string): Promise<string> {
  return ((await (await fetch(`${api.baseUrl}/v1/scans/${id}`)).json()) as { data: { state: string } }).data.state;
}

describe.skipIf(!hasRedisServer)('Redis Sentinel', () => {
  let group: Awaited<ReturnType<typeof redisGroup>>;
  let topology: TestSentinels;

  beforeAll(async () => {
    group = await redisGroup();
    topology = await startSentinels(group);
  }, 60_000);
  afterAll(async () => {
    await group.stopAll();
  });

  it('follows the promoted replica when the master is killed mid-scan, and loses no accepted scan', async () => {
    const prefix = `reposcan-sentinel-${randomUUID().slice(0, 8)}`;
    const redis = {
      REDIS_SENTINELS: topology.sentinels,
      REDIS_SENTINEL_NAME: SENTINEL_MASTER_NAME,
      QUEUE_PREFIX: prefix,
    };
    const api = await startTestApi({ ...redis, ROLE: 'api', SCAN_WAIT_SECONDS: '0' });
    cleanups.push(() => api.close());
    expect((await fetch(`${api.baseUrl}/ready`)).status).toBe(200);
    const worker = await startWorkerProcess({
      ...redis,
      ROLE: 'worker',
      DATA_DIR: api.dataDir,
      ALLOWED_LOCAL_ROOTS: api.localRoot,
      WORKER_CONCURRENCY: '2',
      JOB_LOCK_SECONDS: '5',
      // Each scan holds its worker a while, so the kill lands while scans run.
      FAULT_INJECTION: 'scan:block=1500',
    });
    cleanups.push(() => worker.stop('SIGKILL'));

    const before = [await enqueueScan(api), await enqueueScan(api)];
    for (const id of before) expect((await waitCompleted(api, id, 30_000)).state).toBe('completed');

    const accepted = [await enqueueScan(api), await enqueueScan(api), await enqueueScan(api), await enqueueScan(api)];
    await waitUntil('a scan running', async () =>
      (await Promise.all(accepted.map((id) => state(api, id)))).includes('running'),
    );
    await topology.master.stop('SIGKILL');
    // Submits are refused (503) until the sentinels have promoted the replica, then accepted again.
    const during = [await enqueueScan(api), await enqueueScan(api)];
    expect(await topology.masterPort()).toBe(topology.replica.port);
    const after = [await enqueueScan(api), await enqueueScan(api)];

    for (const id of [...accepted, ...during, ...after])
      expect((await waitCompleted(api, id, 90_000)).state, id).toBe('completed');
    expect((await fetch(`${api.baseUrl}/ready`)).status).toBe(200);
  }, 180_000);
});
