// The service on a real Redis Cluster (three masters, a replica each, on loopback ports): scans
// complete, and a failover of the master holding the queue's slot in the middle of scans loses
// none that were accepted. /ready names a cluster misconfiguration instead of saying 200.
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createBullMqTransport } from '@reposcan/queue';
import { hasRedisServer } from '../../../packages/queue/test/support/private-redis.js';
import { enqueueScan, waitCompleted } from './support/scenarios.js';
import { redisCli, redisGroup, startCluster, waitUntil } from './support/redis-servers.js';
import type { TestCluster } from './support/redis-servers.js';
import { startTestApi } from './support/test-runtime.js';
import type { TestApi } from './support/test-runtime.js';
import { startWorkerProcess } from './support/worker-processes.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

async function readyBody(api: TestApi): Promise<{ status: number; reasons: Array<{ code: string }> }> {
  const response = await fetch(`${api.baseUrl}/ready`);
  return {
    status: response.status,
    reasons: ((await response.json()) as { reasons: Array<{ code: string }> }).reasons,
  };
}

describe.skipIf(!hasRedisServer)('Redis Cluster', () => {
  let group: Awaited<ReturnType<typeof redisGroup>>;
  let cluster: TestCluster;

  beforeAll(async () => {
    group = await redisGroup();
    cluster = await startCluster(group);
  }, 120_000);
  afterAll(async () => {
    await group.stopAll();
  });

  it('scans complete, and a failover of the queue master mid-scan loses no accepted scan', async () => {
    const prefix = `reposcan-cluster-${randomUUID().slice(0, 8)}`;
    const api = await startTestApi({
      REDIS_CLUSTER_NODES: cluster.nodes,
      ROLE: 'api',
      QUEUE_PREFIX: prefix,
      SCAN_WAIT_SECONDS: '0',
    });
    cleanups.push(() => api.close());
    // A hash tag is added, so that every key of the queue shares one slot.
    expect(api.runtime.config.queuePrefix).toBe(`{${prefix}}`);
    expect(await readyBody(api)).toEqual({ status: 200, reasons: [] });
    const worker = await startWorkerProcess({
      REDIS_CLUSTER_NODES: cluster.nodes,
      ROLE: 'worker',
      QUEUE_PREFIX: prefix,
      DATA_DIR: api.dataDir,
      ALLOWED_LOCAL_ROOTS: api.localRoot,
      WORKER_CONCURRENCY: '2',
      JOB_LOCK_SECONDS: '5',
      // Each scan holds its worker a while, so the failover lands while scans run.
      FAULT_INJECTION: 'scan:block=1500',
    });
    cleanups.push(() => worker.stop('SIGKILL'));

    const before = [await enqueueScan(api), await enqueueScan(api)];
    for (const id of before) expect((await waitCompleted(api, id, 30_000)).state).toBe('completed');

    const accepted = [await enqueueScan(api), await enqueueScan(api), await enqueueScan(api), await enqueueScan(api)];
    await waitUntil('a scan running', async () => {
      const states = await Promise.all(
        accepted.map(async (id) => {
          const body = (await (await fetch(`${api.baseUrl}/v1/scans/${id}`)).json()) as { data: { state: string } };
          return body.data.state;
        }),
      );
      return states.includes('running');
    });
    const shard = await cluster.shardOf(`{${prefix}}`);
    expect(await redisCli(shard.replica, 'CLUSTER', 'FAILOVER')).toBe('OK');
    // Scans keep coming while the replica takes over.
    const during = [await enqueueScan(api), await enqueueScan(api)];
    await waitUntil('the replica promoted', async () => (await redisCli(shard.replica, 'ROLE')).startsWith('master'));
    const after = [await enqueueScan(api), await enqueueScan(api)];

    for (const id of [...accepted, ...during, ...after]) {
      const done = await waitCompleted(api, id, 90_000).catch((error: unknown) => {
        // Rare under a loaded full run: what the worker said about it is what a diagnosis needs.
        const said = worker.logs.filter((line) => Number(line.level) >= 40 || line.scanId === id);
        throw new Error(
          `${String(error)}; the worker's warnings and its lines about the scan: ${JSON.stringify(said)}`,
        );
      });
      expect(done.state, id).toBe('completed');
    }
    expect(await readyBody(api)).toEqual({ status: 200, reasons: [] });
    const logged = JSON.stringify(worker.logs);
    expect(logged).not.toContain('CROSSSLOT');
  }, 180_000);

  it('/ready says REDIS_WRONG_SERVER for REDIS_URL naming one node, REDIS_CROSSSLOT for keys in different slots', async () => {
    const prefix = `{reposcan-node-${randomUUID().slice(0, 8)}}`;
    // A master that does not serve the queue's slot answers MOVED.
    const shard = await cluster.shardOf(prefix);
    const masters = [];
    for (const port of cluster.ports) if ((await redisCli(port, 'ROLE')).startsWith('master')) masters.push(port);
    const other = masters.find((port) => port !== shard.master) ?? 0;
    const api = await startTestApi({ REDIS_URL: `redis://127.0.0.1:${other}`, ROLE: 'api', QUEUE_PREFIX: prefix });
    cleanups.push(() => api.close());
    const moved = await readyBody(api);
    expect(moved.status).toBe(503);
    expect(moved.reasons.map((r) => r.code)).toEqual(['REDIS_WRONG_SERVER']);

    // A transport given an untagged prefix (the configuration would have tagged it).
    const plain = 'reposcan-plain';
    const slots = await Promise.all(
      [`${plain}:scans:ready-probe`, `${plain}:scans:meta`].map((key) =>
        redisCli(cluster.ports[0] ?? 0, 'CLUSTER', 'KEYSLOT', key),
      ),
    );
    expect(slots[0]).not.toBe(slots[1]);
    const nodes = cluster.ports.map((port) => ({ host: '127.0.0.1', port }));
    const transport = createBullMqTransport({
      redis: { kind: 'cluster', nodes },
      prefix: plain,
      maxWaiting: 10,
      attempts: 1,
      log: () => {},
    });
    cleanups.push(() => transport.close());
    await waitUntil(
      'the cluster client ready',
      async () => (await transport.queue.checkWrites())?.code !== 'REDIS_UNREACHABLE',
    );
    expect((await transport.queue.checkWrites())?.code).toBe('REDIS_CROSSSLOT');
  });
});
