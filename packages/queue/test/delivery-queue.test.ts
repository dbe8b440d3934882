import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { WEBHOOK_MAX_ATTEMPTS } from '@reposcan/contracts';
import { createBullMqTransport, createMemoryTransport, deliveryRetryDelayMs, purgeQueuePrefix } from '../src/index.js';
import type { DeliveryContext, QueueTransport, TransportOptions } from '../src/index.js';
import { sleep, waitFor } from './support/async.js';
import { REDIS_URL, countKeys, uniquePrefix } from './support/redis.js';

// The webhook delivery queue, against both transports: retries with the documented delays, one
// delivery per scan however often it is queued.

const base: TransportOptions = { maxWaiting: 100, attempts: 3, backoffMs: 20, log: () => {} };
const opened: { transport: QueueTransport; prefix?: string }[] = [];

afterEach(async () => {
  for (const { transport, prefix } of opened.splice(0)) {
    await transport.close();
    if (prefix) {
      await purgeQueuePrefix(REDIS_URL, prefix);
      expect(await countKeys(prefix)).toBe(0);
    }
  }
});

it('retry delays are 1, 4, 15, 60 and 300 units: 2 s, 8 s, 30 s, 2 min, 10 min by default', () => {
  expect([1, 2, 3, 4, 5].map((n) => deliveryRetryDelayMs(n, 2000))).toEqual([2000, 8000, 30_000, 120_000, 600_000]);
  expect(WEBHOOK_MAX_ATTEMPTS).toBe(6);
});

describe.each(['memory', 'bullmq'] as const)('%s delivery queue', (kind) => {
  const open = (): QueueTransport => {
    if (kind === 'memory') {
      const transport = createMemoryTransport(base);
      opened.push({ transport });
      return transport;
    }
    const prefix = uniquePrefix('webhooks');
    const transport = createBullMqTransport({ ...base, redis: { kind: 'single', url: REDIS_URL }, prefix });
    opened.push({ transport, prefix });
    return transport;
  };

  it('runs a failing delivery again after backoff until it succeeds, and a second enqueue is a no-op', async () => {
    const t = open();
    const calls: (DeliveryContext & { at: number })[] = [];
    t.startDeliveryWorker({
      concurrency: 2,
      retryBaseMs: 50,
      closeGraceMs: 1000,
      processor: (ctx) => {
        calls.push({ ...ctx, at: Date.now() });
        return ctx.attempt < 3 ? Promise.reject(new Error('receiver answered 500')) : Promise.resolve();
      },
    });
    const scanId = randomUUID();
    await t.deliveries.enqueue(scanId);
    await t.deliveries.enqueue(scanId);
    await waitFor('three attempts', () => Promise.resolve(calls.length >= 3), 10_000);
    await sleep(400);
    expect(calls.map((c) => [c.scanId, c.attempt, c.maxAttempts])).toEqual([
      [scanId, 1, 6],
      [scanId, 2, 6],
      [scanId, 3, 6],
    ]);
    // 50 ms then 200 ms (BullMQ may add its polling delay, never less).
    expect(calls[1]!.at - calls[0]!.at).toBeGreaterThanOrEqual(45);
    expect(calls[2]!.at - calls[1]!.at).toBeGreaterThanOrEqual(195);
  });

  it('stops after the last attempt', async () => {
    const t = open();
    const attempts: number[] = [];
    t.startDeliveryWorker({
      concurrency: 1,
      retryBaseMs: 10,
      closeGraceMs: 1000,
      processor: (ctx) => {
        attempts.push(ctx.attempt);
        return Promise.reject(new Error('down'));
      },
    });
    await t.deliveries.enqueue(randomUUID());
    await waitFor('six attempts', () => Promise.resolve(attempts.length >= 6), 15_000);
    await sleep(500);
    expect(attempts).toEqual([1, 2, 3, 4, 5, 6]);
  });
});
