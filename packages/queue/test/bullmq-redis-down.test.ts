import { randomUUID } from 'node:crypto';
import { ScanError } from '@reposcan/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBullMqTransport } from '../src/index.js';
import type { QueueTransport } from '../src/index.js';
import { sleep } from './support/async.js';
import { freePort } from './support/redis.js';

// Fail fast: with nothing listening where Redis should be, the producer side answers within
// two seconds (the API turns that into 503 + Retry-After) and never hangs.

describe('bullmq transport with Redis down', () => {
  let transport: QueueTransport;
  const logged: string[] = [];

  beforeAll(async () => {
    transport = createBullMqTransport({
      redis: { kind: 'single', url: `redis://127.0.0.1:${await freePort()}` },
      prefix: `test-reposcan-queue-down-${randomUUID()}`,
      maxWaiting: 10,
      attempts: 3,
      log: (_level, message) => logged.push(message),
    });
  });

  afterAll(async () => {
    await transport.close();
  });

  const timed = async <T>(run: () => Promise<T>): Promise<{ ms: number; result: T | undefined; error: unknown }> => {
    const started = Date.now();
    try {
      const result = await run();
      return { ms: Date.now() - started, result, error: undefined };
    } catch (error) {
      return { ms: Date.now() - started, result: undefined, error };
    }
  };

  it('rejects enqueue with a retryable QUEUE_UNAVAILABLE in under 2 s, at start and later', async () => {
    for (const moment of ['at start', 'later']) {
      const { ms, error } = await timed(() => transport.queue.enqueue(randomUUID()));
      expect(error, moment).toBeInstanceOf(ScanError);
      expect(error).toMatchObject({
        code: 'QUEUE_UNAVAILABLE',
        retryable: true,
        options: { retryAfterSeconds: expect.any(Number) },
      });
      expect(ms, moment).toBeLessThan(2_000);
      await sleep(300);
    }
  });

  it('says REDIS_UNREACHABLE from checkWrites in under 2 s', async () => {
    const { ms, result } = await timed(() => transport.queue.checkWrites());
    expect(result?.code).toBe('REDIS_UNREACHABLE');
    expect(ms).toBeLessThan(2_000);
  });

  it('fails the other producer calls fast too', async () => {
    for (const call of [
      (): Promise<unknown> => transport.queue.waitingCount(),
      () => transport.queue.activeCount(),
      () => transport.queue.jobState(randomUUID()),
      () => transport.queue.remove(randomUUID()),
    ]) {
      const { ms, error } = await timed(call);
      expect(error).toMatchObject({ code: 'QUEUE_UNAVAILABLE' });
      expect(ms).toBeLessThan(2_000);
    }
  });

  it('logs the connection error instead of crashing, once per message', () => {
    expect(logged.some((m) => m.includes('ECONNREFUSED'))).toBe(true);
    expect(new Set(logged).size).toBe(logged.length);
  });

  it('lets a worker start and close while Redis is down', async () => {
    const worker = transport.startWorker({ concurrency: 1, processor: async () => {} });
    await sleep(200);
    const { ms } = await timed(() => worker.close());
    expect(ms).toBeLessThan(2_000);
  });
});
