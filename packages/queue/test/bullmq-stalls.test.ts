import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { SCAN_QUEUE_NAME, createBullMqTransport, purgeQueuePrefix } from '../src/index.js';
import type { FinalFailure, QueueTransport } from '../src/index.js';
import { resolving, waitFor } from './support/async.js';
import { REDIS_URL, uniquePrefix } from './support/redis.js';

// A worker process killed mid-job (kill -9: no cleanup, no lock release). The job must run
// again on another worker; a job that kills its worker twice must end as WORKER_CRASHED,
// reported by a surviving worker in another process.

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const workerScript = fileURLToPath(new URL('./support/stalling-worker.ts', import.meta.url));
const shortLocks = { lockDurationMs: 1_000, stalledIntervalMs: 500 };

const children: ChildProcess[] = [];
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function setup(): { prefix: string; transport: QueueTransport; inspect: Queue } {
  const prefix = uniquePrefix('stall');
  const transport = createBullMqTransport({
    redis: { kind: 'single', url: REDIS_URL },
    prefix,
    maxWaiting: 10,
    attempts: 3,
    log: () => {},
  });
  const inspectConnection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  const inspect = new Queue(SCAN_QUEUE_NAME, { connection: inspectConnection, prefix });
  cleanups.push(async () => {
    await transport.close();
    await inspect.close();
    inspectConnection.disconnect();
    await purgeQueuePrefix(REDIS_URL, prefix);
  });
  return { prefix, transport, inspect };
}

/** Starts the stalling worker in a child process; resolves once it runs `scanId`, then kill -9s it. */
async function crashWorkerOn(prefix: string, scanId: string): Promise<number> {
  const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', workerScript, REDIS_URL, prefix], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  let attempt = 0;
  createInterface({ input: child.stdout }).on('line', (line) => {
    const message = JSON.parse(line) as { active: string; attempt: number };
    if (message.active === scanId) attempt = message.attempt;
  });
  await waitFor(`child worker to run ${scanId}`, () => attempt > 0 || child.exitCode !== null, 20_000).catch(
    (error: unknown) => {
      throw new Error(`${String(error)}; child stderr: ${stderr}`);
    },
  );
  expect(child.exitCode, stderr).toBeNull();
  child.kill('SIGKILL');
  await once(child, 'exit');
  return attempt;
}

describe('bullmq transport when a worker process dies mid-job', () => {
  it('runs the job again on another worker as attempt 2 (stalledCounter 1, no failed attempt used)', async () => {
    const { prefix, transport, inspect } = setup();
    const scanId = randomUUID();
    await transport.queue.enqueue(scanId);
    expect(await crashWorkerOn(prefix, scanId)).toBe(1);
    expect(await transport.queue.jobState(scanId)).toBe('active'); // until its lock expires

    const attempts: [number, number][] = [];
    const reports: FinalFailure[] = [];
    transport.startWorker({
      concurrency: 1,
      ...shortLocks,
      processor: resolving(({ attempt, failedAttempts }) => attempts.push([attempt, failedAttempts])),
      onFinalFailure: resolving((_id, reason) => reports.push(reason)),
    });
    await waitFor('completed', async () => (await transport.queue.jobState(scanId)) === 'completed', 10_000);
    const job = await inspect.getJob(scanId);
    expect(job?.stalledCounter).toBe(1);
    expect(job?.attemptsStarted).toBe(2);
    expect(attempts).toEqual([[2, 0]]);
    expect(reports).toEqual([]);
  });

  it('fails a job that crashed its worker twice as WORKER_CRASHED, reported by a surviving worker', async () => {
    const { prefix, transport, inspect } = setup();
    const scanId = randomUUID();
    await transport.queue.enqueue(scanId);
    expect(await crashWorkerOn(prefix, scanId)).toBe(1);
    expect(await crashWorkerOn(prefix, scanId)).toBe(2); // the crashed run counts

    const processed: string[] = [];
    const reports: [string, FinalFailure][] = [];
    transport.startWorker({
      concurrency: 1,
      ...shortLocks,
      processor: resolving(({ scanId: id }) => processed.push(id)),
      onFinalFailure: resolving((id, reason) => reports.push([id, reason])),
    });
    await waitFor('WORKER_CRASHED report', () => reports.length > 0, 10_000);
    expect(reports).toEqual([
      [
        scanId,
        { code: 'WORKER_CRASHED', message: expect.stringContaining('2 times'), attempts: 2, error: expect.any(Error) },
      ],
    ]);
    expect(processed).toEqual([]);
    expect(await transport.queue.jobState(scanId)).toBe('failed');
    const job = await inspect.getJob(scanId);
    expect(job?.stalledCounter).toBe(2); // what the report is read from
    expect(job?.attemptsStarted).toBe(3); // two crashed runs and the fetch that failed it
  });

  it('aborts the signal when the job loses its lock, and the job runs again', async () => {
    const { prefix, transport, inspect } = setup();
    const reasons: unknown[] = [];
    transport.startWorker({
      concurrency: 1,
      ...shortLocks,
      processor: ({ signal }) =>
        reasons.length > 0
          ? Promise.resolve()
          : new Promise((_, reject) =>
              signal.addEventListener('abort', () => {
                reasons.push(signal.reason);
                reject(signal.reason as Error);
              }),
            ),
    });
    const scanId = randomUUID();
    await transport.queue.enqueue(scanId);
    await waitFor('active', async () => (await transport.queue.jobState(scanId)) === 'active');
    const redis = new Redis(REDIS_URL);
    await redis.del(`${prefix}:${SCAN_QUEUE_NAME}:${scanId}:lock`); // as if another worker had taken over
    redis.disconnect();
    await waitFor('completed', async () => (await transport.queue.jobState(scanId)) === 'completed', 10_000);
    expect(reasons).toEqual([expect.objectContaining({ name: 'AbortError' })]);
    expect((await inspect.getJob(scanId))?.stalledCounter).toBe(1);
  });
});
