import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createBullMqTransport } from '../src/index.js';
import type { QueueTransport, ScanWorker } from '../src/index.js';
import { gate, resolving, sleep, waitFor } from './support/async.js';
import { PrivateRedis, hasRedisServer } from './support/private-redis.js';

// Redis goes away and comes back while the process keeps running: the producer refuses at
// once during the outage, both sides carry on afterwards without a restart, and closing a
// worker neither hangs nor loses a scan's outcome. Runs against a private redis-server, as
// the shared one must stay up for the other test files.

describe.runIf(hasRedisServer)('bullmq transport across a Redis restart', () => {
  let redis: PrivateRedis;
  const transports: QueueTransport[] = [];

  const open = (): QueueTransport => {
    const transport = createBullMqTransport({
      redis: { kind: 'single', url: redis.url },
      prefix: `restart-${randomUUID()}`,
      maxWaiting: 10,
      attempts: 3,
      log: () => {},
    });
    transports.push(transport);
    return transport;
  };

  beforeAll(async () => {
    redis = await PrivateRedis.start();
  });

  afterEach(async () => {
    await redis.up();
    for (const transport of transports.splice(0)) await transport.close();
  });

  afterAll(async () => {
    await redis.down();
  });

  it('refuses at once while Redis is down and works again once it is back', async () => {
    const transport = open();
    const processed: string[] = [];
    transport.startWorker({ concurrency: 1, processor: resolving(({ scanId }) => processed.push(scanId)) });
    const before = randomUUID();
    await transport.queue.enqueue(before);
    await waitFor('first scan', () => processed.includes(before));

    await redis.down();
    const started = Date.now();
    await expect(transport.queue.enqueue(randomUUID())).rejects.toMatchObject({ code: 'QUEUE_UNAVAILABLE' });
    expect((await transport.queue.checkWrites())?.code).toBe('REDIS_UNREACHABLE');
    expect(Date.now() - started).toBeLessThan(1_000);

    await redis.up();
    await waitFor('producer reconnect', async () => (await transport.queue.checkWrites()) === null, 10_000);
    const after = randomUUID();
    await transport.queue.enqueue(after);
    await waitFor('scan after the restart', () => processed.includes(after), 20_000);
  });

  it('closes an idle worker promptly while Redis is down', async () => {
    const transport = open();
    const seen: string[] = [];
    const worker = transport.startWorker({ concurrency: 1, processor: resolving(({ scanId }) => seen.push(scanId)) });
    const scanId = randomUUID();
    await transport.queue.enqueue(scanId);
    await waitFor('worker up', () => seen.includes(scanId));
    await redis.down();
    const started = Date.now();
    await worker.close();
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  const startBlockedWorker = async (): Promise<{ worker: ScanWorker; release: () => void }> => {
    const transport = open();
    const release = gate();
    const started: string[] = [];
    const worker = transport.startWorker({
      concurrency: 1,
      processor: async ({ scanId }) => {
        started.push(scanId);
        await release.promise;
      },
    });
    const scanId = randomUUID();
    await transport.queue.enqueue(scanId);
    await waitFor('scan running', () => started.includes(scanId));
    return { worker, release: release.open };
  };

  it('closes gracefully across an outage: waits for the active scan and for Redis to take its outcome', async () => {
    const { worker, release } = await startBlockedWorker();
    await redis.down();
    let closed = false;
    const closing = worker.close().then(() => (closed = true));
    await sleep(300);
    expect(closed).toBe(false); // the scan is still running
    release();
    await sleep(300);
    expect(closed).toBe(false); // its outcome cannot be written yet
    await redis.up();
    await closing;
  });

  it('lets a forced close cut that wait short', async () => {
    const { worker, release } = await startBlockedWorker();
    await redis.down();
    const closing = worker.close();
    release();
    const started = Date.now();
    await worker.close({ force: true });
    await closing;
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
