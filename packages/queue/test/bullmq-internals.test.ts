import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { RedisConnection, RedisQueueBackend, UnrecoverableError, raw2NextJobData } from 'bullmq';
import type { Job, Processor } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';
import { TrackedWorker, finalFailureOf } from '../src/bullmq-transport.js';
import { SCAN_JOB_NAME, SCAN_QUEUE_NAME } from '../src/job-contract.js';
import type { ScanJobPayload } from '../src/job-contract.js';
import { gate, waitFor } from './support/async.js';

// The BullMQ internals the transport builds on, checked without Redis so that an upgrade that
// changes them fails here, by name, instead of losing jobs at a close or misreporting crashes.
// TrackedWorker overrides moveToActive and processJob and listens to 'active'; the WORKER_CRASHED
// report reads the stall counter BullMQ keeps on the job. BullMQ is pinned exactly: on an upgrade,
// re-read Worker (mainLoop, _getNextJob, nextJobFromJobData, processJob) and the stall, fetch and
// hand-back scripts, then adjust these tests and the transport together.

const requireHere = createRequire(import.meta.url);

describe('the BullMQ release', () => {
  it('is the exact version packages/queue pins', () => {
    const pinned = (
      JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
        dependencies: Record<string, string>;
      }
    ).dependencies.bullmq;
    const installed = (requireHere('bullmq/package.json') as { version: string }).version;
    expect(pinned).toMatch(/^\d+\.\d+\.\d+$/);
    expect(installed).toBe(pinned);
  });
});

describe('the Redis scripts BullMQ loads', () => {
  const scripts = new Map<string, string>();
  (RedisConnection.prototype as unknown as { loadCommands(version: string): void }).loadCommands.call(
    {
      _client: {
        defineCommand: (name: string, command: { lua: string }) => scripts.set(name.replace(/:v$/, ''), command.lua),
      },
    },
    'v',
  );
  const script = (name: string): string => {
    const lua = scripts.get(name);
    if (lua === undefined) throw new Error(`BullMQ no longer loads a script named ${name}`);
    return lua;
  };

  it('count each stall on the job (stc) and, past maxStalledCount, store a deferred failure and move the job back to wait instead of failing it', () => {
    const stalls = script('moveStalledJobsToWait');
    const args = (
      RedisQueueBackend.prototype as unknown as { moveStalledJobsToWaitArgs(): unknown[] }
    ).moveStalledJobsToWaitArgs.call({
      queue: {
        opts: { maxStalledCount: 7, stalledInterval: 500 },
        keys: new Proxy({}, { get: (_, key) => String(key) }),
        toKey: (type: string) => type,
      },
    });
    expect(args[9]).toBe(7); // ARGV[1], after the nine keys
    expect(stalls).toMatch(/local maxStalledJobCount = tonumber\(ARGV\[1\]\)/);
    expect(stalls).toMatch(/local stalledCount = rcall\("HINCRBY", jobKey, "stc", 1\)/);
    expect(stalls).toMatch(
      /if stalledCount > maxStalledJobCount\b[^\n]*then\s+local failedReason = [^\n]+\s+rcall\("HSET", jobKey, "defa", failedReason\)/,
    );
    expect(stalls).toMatch(/moveJobToWait\(/);
    // Failing the job inside the stall check (as BullMQ 5 did) would emit no `failed` on any worker.
    expect(stalls).not.toMatch(/finishedOn|"atm"|:failed/);
  });

  it('count a fetch as a started attempt (ats), and only a finished attempt as a made one (atm): a crash uses up no attempt', () => {
    expect(script('moveToActive')).toMatch(/rcall\("HINCRBY", jobKey, "ats", 1\)/);
    expect(script('moveToActive')).not.toMatch(/"atm"/);
    expect(script('moveToFinished')).toMatch(/rcall\("HINCRBY", jobIdKey, "atm", 1\)/);
  });

  it('hand a job back to wait without counting an attempt or a stall', () => {
    expect(script('moveJobFromActiveToWait')).not.toMatch(/"atm"|"ats"|"stc"/);
  });
});

/** A Redis reply as moveToActive gives it: the job's hash (HGETALL), its id, no rate limit, no delay. */
function fetchedJob(id: string, fields: Record<string, string> = {}): unknown[] {
  const now = String(Date.now());
  const hash = {
    name: SCAN_JOB_NAME,
    data: JSON.stringify({ v: 1, scan_id: id }),
    opts: JSON.stringify({ attempts: 3 }),
    timestamp: now,
    delay: '0',
    priority: '0',
    processedOn: now,
    ats: '1',
    ...fields,
  };
  return raw2NextJobData([Object.entries(hash).flat(), id, 0, 0]);
}

interface Call {
  method: string;
  args: unknown[];
  reply: (value: unknown) => void;
}

/**
 * Stands in for Redis behind a real Worker: each fetch and each outcome write waits until the
 * test answers it, so the test sees what TrackedWorker tracks while a call is under way.
 */
class FakeBackend extends EventEmitter {
  readonly qualifiedName = `fake:${SCAN_QUEUE_NAME}`;
  readonly keys = {};
  readonly minimumBlockTimeout = 0.001;
  closing: Promise<void> | undefined;
  private readonly calls: Call[] = [];
  private readonly onClose: (() => void)[] = [];

  toKey(type: string): string {
    return `${this.qualifiedName}:${type}`;
  }
  clientName(): string {
    return 'fake';
  }
  waitUntilReady(): Promise<void> {
    return Promise.resolve();
  }
  moveStalledJobsToWait(): Promise<string[]> {
    return Promise.resolve([]);
  }
  extendLocks(): Promise<string[]> {
    return Promise.resolve([]);
  }
  waitForJob(): Promise<null> {
    return new Promise((resolve) => this.onClose.push(() => resolve(null)));
  }
  disconnectBlocking(): Promise<void> {
    return Promise.resolve();
  }
  reconnectBlocking(): Promise<void> {
    return Promise.resolve();
  }
  moveToActive(...args: unknown[]): Promise<unknown> {
    return this.closing ? Promise.resolve([]) : this.call('moveToActive', args);
  }
  moveToCompleted(...args: unknown[]): Promise<unknown> {
    return this.call('moveToCompleted', args);
  }
  moveToFailed(...args: unknown[]): Promise<unknown> {
    return this.call('moveToFailed', args);
  }
  close(): Promise<void> {
    this.closing ??= Promise.resolve();
    for (const call of this.calls.splice(0))
      call.reply(call.method === 'moveToActive' ? [] : { result: undefined, finishedOn: Date.now() });
    for (const wake of this.onClose.splice(0)) wake();
    return this.closing;
  }

  /** The next call of `method` under way, once the worker has made it. */
  async next(method: string): Promise<Call> {
    await waitFor(`a ${method} call`, () => this.calls.some((c) => c.method === method));
    const index = this.calls.findIndex((c) => c.method === method);
    return this.calls.splice(index, 1)[0]!;
  }

  private call(method: string, args: unknown[]): Promise<unknown> {
    return new Promise((reply) => this.calls.push({ method, args, reply }));
  }
}

describe('TrackedWorker on a real BullMQ Worker', () => {
  const workers: TrackedWorker[] = [];
  afterEach(async () => {
    for (const worker of workers.splice(0)) await worker.close(true);
  });

  function start(processor: Processor<ScanJobPayload>): {
    backend: FakeBackend;
    worker: TrackedWorker;
    errors: Error[];
  } {
    const backend = new FakeBackend();
    const worker = new TrackedWorker(
      SCAN_QUEUE_NAME,
      processor,
      { connection: {}, concurrency: 1 },
      () => backend as unknown as RedisQueueBackend,
    );
    workers.push(worker);
    const errors: Error[] = [];
    worker.on('error', (error) => errors.push(error));
    return { backend, worker, errors };
  }

  it('counts a fetch from the call until its job reaches processJob, and a job until its outcome is written, also a job handed over with an outcome', async () => {
    const [first, second] = [randomUUID(), randomUUID()];
    const started: string[] = [];
    const firstRuns = gate();
    const { backend, worker, errors } = start(async (job) => {
      started.push(job.id ?? '');
      if (job.id === first) await firstRuns.promise;
    });
    const announced: [string | undefined, number][] = [];
    worker.on('active', (job) => announced.push([job.id, worker.fetching.size]));

    const fetch = await backend.next('moveToActive');
    expect(worker.fetching.size).toBe(1); // under way, no job known yet
    fetch.reply(fetchedJob(first));
    await waitFor('the first job to start', () => started.length === 1);
    expect([worker.fetching.size, worker.processing.size]).toEqual([0, 1]);

    firstRuns.open();
    const written = await backend.next('moveToCompleted');
    expect(worker.processing.size).toBe(1); // its outcome is not written yet
    written.reply({ result: fetchedJob(second), finishedOn: Date.now() }); // Redis hands the next job over with it
    await waitFor('the handed-over job to start', () => started.length === 2);
    (await backend.next('moveToCompleted')).reply({ result: undefined, finishedOn: Date.now() });
    await waitFor('the second outcome written', () => worker.processing.size === 0);
    const idle = await backend.next('moveToActive');
    expect(worker.fetching.size).toBe(1);
    idle.reply([]); // the queue is empty
    await waitFor('a fetch that brought no job to end', () => worker.fetching.size === 0);

    expect(started).toEqual([first, second]);
    // Each job counted as a fetch under way when BullMQ announced it, before processJob.
    expect(announced.map(([id]) => id)).toEqual([first, second]);
    expect(announced.every(([, inFlight]) => inFlight > 0)).toBe(true);
    expect(errors).toEqual([]);
  });

  it('fails a job whose stall count passed the limit without running it, and reports it as WORKER_CRASHED from the count', async () => {
    const [crashed, broken] = [randomUUID(), randomUUID()];
    const started: string[] = [];
    const { backend, worker, errors } = start((job) => {
      started.push(job.id ?? '');
      return Promise.reject(new UnrecoverableError('the payload is broken'));
    });
    const failed: [Job<ScanJobPayload> | undefined, Error][] = [];
    worker.on('failed', (job, error) => failed.push([job, error]));

    // The job as the stall check leaves it when maxStalledCount is 1: counted twice, failure deferred.
    (await backend.next('moveToActive')).reply(
      fetchedJob(crashed, { ats: '2', stc: '2', defa: 'job stalled more than allowable limit' }),
    );
    (await backend.next('moveToFailed')).reply({ result: fetchedJob(broken, { stc: '1' }), finishedOn: Date.now() });
    (await backend.next('moveToFailed')).reply({ result: undefined, finishedOn: Date.now() });
    await waitFor('both failures', () => failed.length === 2);

    expect(started).toEqual([broken]);
    const reports = failed.map(([job, error]) => {
      expect(job?.finishedOn).toBeTypeOf('number'); // failed for good, not scheduled for a retry
      expect(error).toBeInstanceOf(UnrecoverableError);
      return [job?.id, job && finalFailureOf(job, error, 1)];
    });
    expect(reports).toEqual([
      // Two runs crashed; the deferred failure BullMQ adds to attemptsMade ran nothing.
      [
        crashed,
        { code: 'WORKER_CRASHED', message: expect.stringContaining('2 times'), attempts: 2, error: expect.any(Error) },
      ],
      // One run crashed, the next threw.
      [broken, { code: 'FAILED', message: 'the payload is broken', attempts: 2, error: expect.any(Error) }],
    ]);
    expect(errors).toEqual([]);
  });
});
