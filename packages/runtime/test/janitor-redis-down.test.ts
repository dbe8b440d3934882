import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createBullMqTransport } from '@reposcan/queue';
import { createdScan, tempStore } from '../../../packages/storage/test/temp-store.js';
import { createLogger } from '../src/create-logger.js';
import { createJanitor } from '../src/janitor.js';

// Apart from janitor.test.ts: this one talks to a Redis client (pointed at a port where none
// listens), so it runs with the integration tests.
const log = createLogger('silent', 'janitor-test');
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('janitor', () => {
  it('with Redis unreachable, cuts the sweep short instead of failing scans it cannot judge', async () => {
    const temp = await tempStore();
    const transport = createBullMqTransport({
      redis: { kind: 'single', url: 'redis://127.0.0.1:1' },
      prefix: `janitor-${randomUUID()}`,
      maxWaiting: 10,
      attempts: 1,
      log: () => {},
    });
    cleanups.push(
      () => temp.cleanup(),
      () => transport.close(),
    );
    const running = await createdScan(temp.store, { state: 'running', attempt: 1 });
    const janitor = createJanitor({
      store: temp.store,
      queue: transport.queue,
      log,
      ttlHours: 24,
      maxAttemptMs: 600_000,
      now: () => Date.now() + 60_000,
    });
    const report = await janitor.sweep();
    expect(report).toMatchObject({ requeued: 0, lost: 0 });
    expect(await temp.store.readState(running)).toMatchObject({ state: 'running' });
  });
});
