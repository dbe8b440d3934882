import { randomUUID } from 'node:crypto';
import { ScanError } from '@reposcan/contracts';
import { afterEach, describe, expect, it } from 'vitest';
import { createBullMqTransport, createMemoryTransport, purgeQueuePrefix } from '../src/index.js';
import type { FinalFailure, QueueTransport, ScanJobContext, ScanJobState, TransportOptions } from '../src/index.js';
import { gate, resolving, sleep, waitFor } from './support/async.js';
import { REDIS_URL, countKeys, uniquePrefix } from './support/redis.js';

// One behavioural suite, run against both transports: the embedded mode must keep every
// promise the Redis mode makes (except surviving a restart).

const quiet = (): void => {};
/** What a socket's peer hanging up looks like to Node: a transient failure. */
const connectionReset = (): Error =>
  Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET', syscall: 'read' });
const base: TransportOptions = { maxWaiting: 100, attempts: 3, backoffMs: 20, log: quiet };

const opened: { transport: QueueTransport; prefix?: string }[] = [];

const factories = {
  memory: (o: Partial<TransportOptions> = {}) => createMemoryTransport({ ...base, ...o }),
  bullmq: (o: Partial<TransportOptions> = {}) => {
    const prefix = uniquePrefix('contract');
    const transport = createBullMqTransport({ ...base, ...o, redis: { kind: 'single', url: REDIS_URL }, prefix });
    opened.push({ transport, prefix });
    return transport;
  },
};

afterEach(async () => {
  for (const { transport, prefix } of opened.splice(0)) {
    await transport.close();
    if (prefix) {
      await purgeQueuePrefix(REDIS_URL, prefix);
      expect(await countKeys(prefix)).toBe(0);
    }
  }
});

describe.each(['memory', 'bullmq'] as const)('%s transport', (kind) => {
  const open = (o: Partial<TransportOptions> = {}): QueueTransport => {
    const transport = factories[kind](o);
    if (kind === 'memory') opened.push({ transport });
    return transport;
  };
  const id = (): string => randomUUID();
  const reaches = (t: QueueTransport, scanId: string, state: ScanJobState, timeoutMs?: number) =>
    waitFor(`${scanId} ${state}`, async () => (await t.queue.jobState(scanId)) === state, timeoutMs);

  it('reports its kind and takes writes', async () => {
    const t = open();
    expect(t.kind).toBe(kind);
    expect(await t.queue.checkWrites()).toBeNull();
  });

  it('processes an enqueued scan exactly once', async () => {
    const t = open();
    const calls: ScanJobContext[] = [];
    t.startWorker({ concurrency: 1, processor: resolving((ctx) => calls.push(ctx)) });
    const scanId = id();
    await t.queue.enqueue(scanId);
    await reaches(t, scanId, 'completed');
    await sleep(100);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ scanId, attempt: 1, failedAttempts: 0, maxAttempts: 3 });
    expect(calls[0]!.signal.aborted).toBe(false);
  });

  it('treats a second enqueue of a held id as a no-op', async () => {
    const t = open();
    const scanId = id();
    await t.queue.enqueue(scanId);
    await t.queue.enqueue(scanId);
    expect(await t.queue.waitingCount()).toBe(1);
    let runs = 0;
    t.startWorker({ concurrency: 2, processor: resolving(() => runs++) });
    await reaches(t, scanId, 'completed');
    await t.queue.enqueue(scanId); // still held as completed
    await sleep(100);
    expect(runs).toBe(1);
    expect(await t.queue.jobState(scanId)).toBe('completed');
  });

  it('runs at most `concurrency` scans at once', async () => {
    const t = open();
    let inFlight = 0;
    let peak = 0;
    const ids = Array.from({ length: 5 }, id);
    for (const scanId of ids) await t.queue.enqueue(scanId);
    t.startWorker({
      concurrency: 2,
      processor: async () => {
        peak = Math.max(peak, ++inFlight);
        await sleep(80);
        inFlight--;
      },
    });
    for (const scanId of ids) await reaches(t, scanId, 'completed');
    expect(peak).toBe(2);
  });

  it('retries retryable failures with backoff, then succeeds', async () => {
    const t = open();
    const attempts: number[] = [];
    const finalFailures: string[] = [];
    t.startWorker({
      concurrency: 1,
      onFinalFailure: resolving((scanId) => finalFailures.push(scanId)),
      processor: async ({ attempt }) => {
        attempts.push(attempt);
        await sleep(5);
        if (attempt === 1) throw connectionReset();
        if (attempt === 2) throw new ScanError('CLONE_FAILED', 'remote hung up', { retryable: true });
      },
    });
    const scanId = id();
    await t.queue.enqueue(scanId);
    await reaches(t, scanId, 'completed');
    expect(attempts).toEqual([1, 2, 3]);
    expect(finalFailures).toEqual([]);
  });

  it("gives each client a fair share: a client's scan goes ahead of the queued scans of a client that submitted more", async () => {
    const t = open();
    const started: string[] = [];
    const release = gate();
    const names = new Map<string, string>();
    t.startWorker({
      concurrency: 1,
      processor: async ({ scanId }) => {
        started.push(names.get(scanId) ?? '?');
        await release.promise;
      },
    });
    const submit = async (name: string, client?: string): Promise<string> => {
      const scanId = id();
      names.set(scanId, name);
      await t.queue.enqueue(scanId, client === undefined ? {} : { client });
      return scanId;
    };
    const first = await submit('a1', 'client-a');
    await reaches(t, first, 'active');
    const last = [
      await submit('a2', 'client-a'),
      await submit('a3', 'client-a'),
      await submit('b1', 'client-b'),
      await submit('c1', 'client-c'),
      await submit('b2', 'client-b'),
      await submit('lost'),
    ].at(-1) as string;
    release.open();
    await reaches(t, last, 'completed');
    await waitFor('every scan started', () => started.length === 7);
    // No client: a janitor's re-enqueue, first. Then by submissions in the window, each client in its own order.
    expect(started).toEqual(['a1', 'lost', 'b1', 'c1', 'a2', 'b2', 'a3']);
  });

  it('fails a non-retryable ScanError at once and reports FAILED', async () => {
    const t = open();
    let runs = 0;
    const reports: [string, FinalFailure][] = [];
    t.startWorker({
      concurrency: 1,
      onFinalFailure: resolving((scanId, reason) => reports.push([scanId, reason])),
      processor: async () => {
        runs++;
        await sleep(5);
        throw new ScanError('BRANCH_NOT_FOUND', 'No branch "nope" in this repository.');
      },
    });
    const scanId = id();
    await t.queue.enqueue(scanId);
    await waitFor('final failure report', () => reports.length === 1);
    expect(reports[0]).toEqual([
      scanId,
      { code: 'FAILED', message: 'No branch "nope" in this repository.', attempts: 1, error: expect.any(Error) },
    ]);
    expect(await t.queue.jobState(scanId)).toBe('failed');
    await sleep(100);
    expect(runs).toBe(1);
    expect(reports).toHaveLength(1);
  });

  it('fails an unexpected error (a bug) at once and reports FAILED: it would fail the same way again', async () => {
    const t = open();
    let runs = 0;
    const reports: FinalFailure[] = [];
    t.startWorker({
      concurrency: 1,
      onFinalFailure: resolving((_scanId, reason) => reports.push(reason)),
      processor: async () => {
        runs++;
        await sleep(5);
        const missing = undefined as unknown as { count(): number };
        missing.count();
      },
    });
    const scanId = id();
    await t.queue.enqueue(scanId);
    await waitFor('final failure report', () => reports.length === 1);
    expect(reports[0]?.code).toBe('FAILED');
    expect(reports[0]?.message).toMatch(/Cannot read properties of undefined/);
    expect(await t.queue.jobState(scanId)).toBe('failed');
    await sleep(100);
    expect(runs).toBe(1);
  });

  it('reports FAILED once when retries run out', async () => {
    const t = open({ attempts: 2 });
    const attempts: number[] = [];
    const reports: FinalFailure[] = [];
    t.startWorker({
      concurrency: 1,
      onFinalFailure: resolving((_scanId, reason) => reports.push(reason)),
      processor: async ({ attempt, failedAttempts, maxAttempts }) => {
        attempts.push(attempt);
        expect(failedAttempts).toBe(attempt - 1);
        expect(maxAttempts).toBe(2);
        await sleep(5);
        throw Object.assign(new Error(`flaky ${attempt}`), { code: 'EAGAIN' });
      },
    });
    const scanId = id();
    await t.queue.enqueue(scanId);
    await waitFor('final failure report', () => reports.length === 1);
    await sleep(100);
    expect(attempts).toEqual([1, 2]);
    expect(reports).toEqual([{ code: 'FAILED', message: 'flaky 2', attempts: 2, error: expect.any(Error) }]);
  });

  it('logs a final-failure report that fails, and a closing worker waits for one still running', async () => {
    const logged: [string, string, Record<string, unknown> | undefined][] = [];
    const t = open({ log: (level, message, fields) => logged.push([level, message, fields]) });
    const [first, second] = [id(), id()];
    const slow = gate();
    let slowDone = false;
    const worker = t.startWorker({
      concurrency: 1,
      onFinalFailure: async (scanId) => {
        if (scanId === first) throw new Error('the state store is down');
        await slow.promise;
        slowDone = true;
      },
      processor: () => Promise.reject(new ScanError('BRANCH_NOT_FOUND', 'No branch "nope" in this repository.')),
    });
    await t.queue.enqueue(first);
    await waitFor('the failed report logged', () => logged.some(([, message]) => message === 'onFinalFailure failed'));
    expect(logged.find(([, message]) => message === 'onFinalFailure failed')).toEqual([
      'error',
      'onFinalFailure failed',
      { scanId: first, code: 'FAILED', err: 'the state store is down' },
    ]);
    await t.queue.enqueue(second);
    await reaches(t, second, 'failed');
    let closed = false;
    const closing = worker.close().then(() => (closed = true));
    await sleep(100);
    expect(closed).toBe(false);
    slow.open();
    await closing;
    expect(slowDone).toBe(true);
  });

  it('refuses with QUEUE_FULL once maxWaiting scans wait', async () => {
    const t = open({ maxWaiting: 2 });
    const [a, b, c] = [id(), id(), id()];
    await t.queue.enqueue(a);
    await t.queue.enqueue(b);
    const refusal = await t.queue.enqueue(c).catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(ScanError);
    expect(refusal).toMatchObject({ code: 'QUEUE_FULL', options: { retryAfterSeconds: expect.any(Number) } });
    await t.queue.enqueue(a); // a held id stays a no-op, full or not
    expect(await t.queue.waitingCount()).toBe(2);
    expect(await t.queue.jobState(c)).toBe('absent');
  });

  it('holds the bound exactly when a burst of enqueues runs at once', async () => {
    const t = open({ maxWaiting: 5 });
    const outcomes = await Promise.all(
      Array.from({ length: 30 }, () =>
        t.queue.enqueue(id()).then(
          () => 'added',
          (e: unknown) => (e as ScanError).code,
        ),
      ),
    );
    expect(outcomes.filter((o) => o === 'added')).toHaveLength(5);
    expect(outcomes.filter((o) => o === 'QUEUE_FULL')).toHaveLength(25);
    expect(await t.queue.waitingCount()).toBe(5);
  });

  it('rejects an id that is not a scan id', async () => {
    const t = open();
    await expect(t.queue.enqueue('not-a-uuid')).rejects.toMatchObject({ code: 'INVALID_SCAN_ID' });
  });

  it('removes a waiting job and leaves an active one to its worker', async () => {
    const t = open();
    const [waiting, running] = [id(), id()];
    await t.queue.enqueue(waiting);
    expect(await t.queue.remove(waiting)).toBe('removed');
    expect(await t.queue.jobState(waiting)).toBe('absent');
    expect(await t.queue.remove(id())).toBe('absent');

    const release = gate();
    const seen: string[] = [];
    t.startWorker({
      concurrency: 1,
      processor: async ({ scanId }) => {
        seen.push(scanId);
        await release.promise;
      },
    });
    await t.queue.enqueue(running);
    await reaches(t, running, 'active');
    expect(await t.queue.activeCount()).toBe(1);
    expect(await t.queue.remove(running)).toBe('active');
    release.open();
    await reaches(t, running, 'completed');
    expect(await t.queue.activeCount()).toBe(0);
    expect(await t.queue.remove(running)).toBe('removed');
    expect(await t.queue.jobState(running)).toBe('absent');
    expect(seen).toEqual([running]);
  });

  it('closes gracefully: waits for the active scan to finish', async () => {
    const t = open();
    const release = gate();
    let signal: AbortSignal | undefined;
    const worker = t.startWorker({
      concurrency: 1,
      processor: async (ctx) => {
        signal = ctx.signal;
        await release.promise;
      },
    });
    const scanId = id();
    await t.queue.enqueue(scanId);
    // Started, not just active: Redis marks a job active before the worker has received it.
    await waitFor('the processor to start', () => signal !== undefined);
    let closed = false;
    const closing = worker.close().then(() => (closed = true));
    await sleep(200);
    expect(closed).toBe(false);
    expect(signal?.aborted).toBe(false);
    release.open();
    await closing;
    expect(await t.queue.jobState(scanId)).toBe('completed');
  });

  it('on a forced close aborts the signal and hands the scan back without using an attempt', async () => {
    const t = open();
    let processing = false;
    const first = t.startWorker({
      concurrency: 1,
      processor: ({ signal }) => {
        processing = true;
        return new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error)));
      },
    });
    const scanId = id();
    await t.queue.enqueue(scanId);
    await waitFor('the processor to start', () => processing);
    const started = Date.now();
    await first.close({ force: true });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(await t.queue.jobState(scanId)).toBe('waiting');

    const attempts: number[] = [];
    t.startWorker({ concurrency: 1, processor: resolving(({ attempt }) => attempts.push(attempt)) });
    await reaches(t, scanId, 'completed');
    expect(attempts).toEqual([1]);
  });

  it('moves a job through waiting → active → delayed → active → completed', async () => {
    const t = open({ backoffMs: 400 });
    const scanId = id();
    expect(await t.queue.jobState(scanId)).toBe('absent');
    await t.queue.enqueue(scanId);
    expect(await t.queue.jobState(scanId)).toBe('waiting');

    const gates = [gate(), gate()];
    t.startWorker({
      concurrency: 1,
      processor: async ({ attempt }) => {
        await gates[attempt - 1]!.promise;
        if (attempt === 1) throw connectionReset();
      },
    });
    await reaches(t, scanId, 'active');
    gates[0]!.open();
    await reaches(t, scanId, 'delayed', 1_000);
    expect(await t.queue.waitingCount()).toBe(1); // a delayed retry still counts as waiting
    await reaches(t, scanId, 'active');
    gates[1]!.open();
    await reaches(t, scanId, 'completed');
    expect(await t.queue.waitingCount()).toBe(0);
  });
});
