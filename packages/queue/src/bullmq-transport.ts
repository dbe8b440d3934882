import { setTimeout as sleep } from 'node:timers/promises';
import type { RedisTarget } from '@reposcan/config';
import { isScanError } from '@reposcan/contracts';
import { Queue, UnrecoverableError, WaitingError, Worker } from 'bullmq';
import type { Job, JobState, JobsOptions } from 'bullmq';
import { ReplyError } from 'ioredis';
import { createRedisCredentialVault } from './credential-vault.js';
import type { CredentialVault } from './credential-vault.js';
import { createBullMqDeliveries } from './delivery-queue.js';
import type { DeliveryWorker } from './delivery-queue.js';
import { FAIR_SHARE_WINDOW_MS, fairPriority } from './fair-share.js';
import { isFinalError, lockLostAbortReason, shutdownAbortReason, withinForceCloseGrace } from './failure-policy.js';
import {
  BACKOFF_JITTER,
  DEFAULT_BACKOFF_MS,
  KEEP_COMPLETED,
  KEEP_FAILED,
  SCAN_JOB_NAME,
  SCAN_QUEUE_NAME,
  ScanJobPayload,
} from './job-contract.js';
import { invalidScanId, queueFull, queueUnavailable } from './queue-errors.js';
import { consoleLog, createErrorReporter } from './queue-log.js';
import type { QueueLog } from './queue-log.js';
import { checkTransportOptions, checkWorkerOptions } from './queue-transport.js';
import type {
  FinalFailure,
  QueueTransport,
  ScanJobState,
  ScanQueue,
  ScanWorker,
  ScanWorkerOptions,
  TransportOptions,
} from './queue-transport.js';
import { FinalFailureReports } from './final-failure-reports.js';
import { closeConnection, createProducerConnection, createWorkerConnection } from './redis-connections.js';
import { createRedisStateSignals } from './state-signals.js';
import { redisWindowCounters } from './window-counters.js';
import type { WindowCounters } from './window-counters.js';
import { createRedisWorkerRegistry } from './worker-registry.js';
import {
  unreachableReason,
  WRITE_PROBE_SCRIPT,
  WRITE_PROBE_TTL_MS,
  writeFailureReason,
  writeProbeKeys,
} from './write-probe.js';

export interface BullMqTransportOptions extends TransportOptions {
  redis: RedisTarget;
  /**
   * Key prefix of the queue and of every other key (and channel) the service writes: deployments
   * and test runs sharing one Redis stay apart. On a cluster it needs a hash tag ({reposcan}).
   */
  prefix: string;
  /** CREDENTIALS_KEY (64 hex digits): seals requests' git credentials; null refuses them. */
  credentialsKey?: string | null;
}

/** Upper bound on one producer call, whatever it waits for: the first connect or a slow Redis. */
const CALL_DEADLINE_MS = 1_500;
/** How long a closing worker waits for jobs Redis already made active to reach processJob. */
const FETCH_ARRIVAL_GRACE_MS = 3_000;
const PROBE_DEADLINE_MS = 1_000;

export function createBullMqTransport(o: BullMqTransportOptions): QueueTransport {
  checkTransportOptions(o);
  const log = o.log ?? consoleLog;
  const report = createErrorReporter(log);
  const queue = createBullMqQueue(o, report);
  const stateSignals = createRedisStateSignals({ redis: o.redis, prefix: o.prefix, report });
  const registry = createRedisWorkerRegistry({ redis: o.redis, prefix: o.prefix, report });
  const workers: ScanWorker[] = [];
  const deliveries = createBullMqDeliveries({ redis: o.redis, prefix: o.prefix, report });
  const deliveryWorkers: DeliveryWorker[] = [];
  return {
    kind: 'bullmq',
    queue,
    stateSignals,
    workers: registry,
    counters: queue.counters,
    credentials: queue.credentials,
    startWorker(options) {
      const worker = startBullMqWorker(o, options, log, report);
      workers.push(worker);
      return worker;
    },
    deliveries: deliveries.queue,
    startDeliveryWorker(options) {
      const worker = deliveries.startWorker(options);
      deliveryWorkers.push(worker);
      return worker;
    },
    async close() {
      await Promise.all([...workers, ...deliveryWorkers].map((w) => w.close()));
      await queue.close();
      await deliveries.queue.close();
      await stateSignals.close();
      await registry.close();
    },
  };
}

function createBullMqQueue(
  o: BullMqTransportOptions,
  report: (source: string, error: unknown) => void,
): ScanQueue & { counters: WindowCounters; credentials: CredentialVault } {
  const connection = createProducerConnection(o.redis, report);
  const queue = new Queue<ScanJobPayload>(SCAN_QUEUE_NAME, { connection, prefix: o.prefix });
  queue.on('error', (error) => report('queue', error));
  const jobOptions: JobsOptions = {
    attempts: o.attempts,
    backoff: { type: 'exponential', delay: o.backoffMs ?? DEFAULT_BACKOFF_MS, jitter: BACKOFF_JITTER },
    removeOnComplete: KEEP_COMPLETED,
    removeOnFail: KEEP_FAILED,
  };

  // Every call runs under one deadline and refuses at once while Redis is unreachable, so the
  // API answers 503 instead of waiting for a reconnect. Only while the very first connection
  // attempt is still under way (process start) does a call wait for it, within its deadline.
  let firstAttemptDone = false;
  const firstAttempt = new Promise<void>((resolve) => {
    const done = (): void => {
      firstAttemptDone = true;
      resolve();
    };
    connection.once('ready', done);
    connection.once('error', done);
  });
  const call = async <T>(operation: () => Promise<T>, deadlineMs = CALL_DEADLINE_MS): Promise<T> => {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>(
      (_, reject) =>
        (timer = setTimeout(() => reject(new Error(`Redis did not answer within ${deadlineMs} ms`)), deadlineMs)),
    );
    deadline.catch(() => {});
    try {
      if (connection.status !== 'ready' && !firstAttemptDone) await Promise.race([firstAttempt, deadline]);
      if (connection.status !== 'ready') throw queueUnavailable();
      const pending = operation();
      pending.catch(() => {}); // may still reject after the deadline has answered
      return await Promise.race([pending, deadline]);
    } catch (error) {
      if (isScanError(error)) throw error;
      throw queueUnavailable(error);
    } finally {
      clearTimeout(timer);
    }
  };

  const countWaiting = (): Promise<number> => queue.getJobCountByTypes('waiting', 'prioritized', 'delayed');
  // Shared by every API process on this queue, under the queue's prefix (and cluster slot).
  const counters = redisWindowCounters(connection, `${o.prefix}:${SCAN_QUEUE_NAME}`);
  const probeKeys = writeProbeKeys(o.prefix, SCAN_QUEUE_NAME);
  let closing: Promise<void> | undefined;
  // Count and add one enqueue at a time: run side by side, a burst of them all saw room and
  // all added (133 accepted under a bound of 40). Across API processes the bound stays soft.
  let enqueueTurn: Promise<unknown> = Promise.resolve();

  const credentials = createRedisCredentialVault({
    redis: connection,
    prefix: o.prefix,
    key: o.credentialsKey ? Buffer.from(o.credentialsKey, 'hex') : null,
    call,
  });

  return {
    counters: { add: (scope, client, windowMs) => call(() => counters.add(scope, client, windowMs)) },
    credentials,
    async enqueue(scanId, options = {}) {
      const payload = ScanJobPayload.safeParse({ v: 1, scan_id: scanId });
      if (!payload.success) throw invalidScanId(scanId);
      const turn = enqueueTurn.then(() =>
        call(async () => {
          // Re-enqueueing a scan the queue already holds stays a no-op even when the queue is full.
          if ((await countWaiting()) >= o.maxWaiting && (await queue.getJobState(scanId)) === 'unknown')
            throw queueFull(o.maxWaiting);
          const priority =
            options.client === undefined
              ? undefined
              : fairPriority((await counters.add('fair-share', options.client, FAIR_SHARE_WINDOW_MS)).count);
          await queue.add(SCAN_JOB_NAME, payload.data, {
            ...jobOptions,
            jobId: scanId,
            ...(priority === undefined ? {} : { priority }),
          });
        }),
      );
      enqueueTurn = turn.catch(() => undefined);
      await turn;
    },
    waitingCount: () => call(countWaiting),
    activeCount: () => call(() => queue.getActiveCount()),
    jobState: (scanId) => call(async () => toScanJobState(await queue.getJobState(scanId))),
    remove: (scanId) =>
      call(async () => {
        const state = toScanJobState(await queue.getJobState(scanId));
        if (state === 'absent' || state === 'active') return state;
        // 0: the job was locked by a worker that fetched it in between.
        return (await queue.remove(scanId)) === 1 ? 'removed' : 'active';
      }),
    async checkWrites() {
      try {
        await call(() => connection.eval(WRITE_PROBE_SCRIPT, 2, ...probeKeys, WRITE_PROBE_TTL_MS), PROBE_DEADLINE_MS);
        return null;
      } catch (error) {
        const cause = isScanError(error) ? error.cause : error;
        if (cause instanceof ReplyError) return writeFailureReason(cause);
        return unreachableReason(cause instanceof Error ? cause.message.replace(/\.$/, '') : 'not connected');
      }
    },
    close() {
      closing ??= (async () => {
        await queue.close().catch((error: unknown) => report('queue', error));
        await closeConnection(connection);
      })();
      return closing;
    },
  };
}

/**
 * What a job that failed for good tells its owner. BullMQ's stall check counts each stall on the
 * job itself (`stc`, read back as `stalledCounter`), and once the count passes `maxStalledCount`
 * it does not fail the job there: it stores a deferred failure and moves the job back to wait.
 * The next worker to fetch it fails it without calling the processor and emits `failed` there
 * (moveStalledJobsToWait, Worker#processJob), with the counter it fetched. So a surviving worker
 * process sees the crash of another one through its own `failed` event, and the counter, not the
 * failure's text, says it was a crash. Any other failure leaves the counter within the limit: a
 * job past it never reaches the processor again.
 */
export function finalFailureOf(
  job: Pick<Job, 'stalledCounter' | 'attemptsMade'>,
  error: Error,
  maxStalledCount: number,
): FinalFailure {
  // attemptsMade already counts this failure; for a crash it is the deferred one, which ran nothing.
  return job.stalledCounter > maxStalledCount
    ? {
        code: 'WORKER_CRASHED',
        message: `The scan stopped its worker ${job.stalledCounter} times (killed or out of memory) and was not run again.`,
        attempts: job.stalledCounter + job.attemptsMade - 1,
        error,
      }
    : { code: 'FAILED', message: error.message, attempts: job.stalledCounter + job.attemptsMade, error };
}

/**
 * The run a fetched job is about to have: BullMQ counts thrown failures (`attemptsMade`) and
 * crashes (`stalledCounter`) apart, and neither counts a job handed back by moveToWait.
 * (`attemptsStarted` would count hand-backs too.)
 */
export function attemptOf(job: Pick<Job, 'stalledCounter' | 'attemptsMade'>): number {
  return job.attemptsMade + job.stalledCounter + 1;
}

function toScanJobState(state: JobState | 'unknown'): ScanJobState {
  switch (state) {
    case 'active':
    case 'delayed':
    case 'completed':
    case 'failed':
      return state;
    case 'unknown':
      return 'absent';
    default: // waiting, prioritized, waiting-children
      return 'waiting';
  }
}

interface RunningJob {
  controller: AbortController;
  /** Aborted by a forced close: whatever the processor does next, the job goes back to the queue. */
  handBack: boolean;
}

/**
 * Tracks what a graceful close must wait for. `processing`: each job from processJob until
 * BullMQ has written its outcome (completed, failed, retry) to Redis. `fetching`: a job Redis
 * has already made active but that has not reached processJob yet; processJob hands such a job
 * back after close began, but if close did not wait for it the job would stay active, locked
 * and counted as running, until its lock expired and the stall check returned it as a stall.
 */
export class TrackedWorker extends Worker<ScanJobPayload> {
  readonly processing = new Set<Promise<unknown>>();
  readonly fetching = new Set<Promise<unknown>>();
  /** Fetched jobs waiting for processJob, by id: each resolver ends its fetch. */
  private readonly awaitingStart = new Map<string, (() => void)[]>();

  private static track(set: Set<Promise<unknown>>, work: Promise<unknown>): void {
    set.add(work);
    work.finally(() => set.delete(work)).catch(() => {});
  }

  // BullMQ announces every job it hands to processJob as 'active' first, whether a fetch brought
  // it or it came back with a finished job's outcome; from then on it counts as a fetch under way.
  // Subscribed in a field, not a constructor, so the class keeps Worker's constructor overloads.
  private readonly announcementsTracked = this.on('active', (job) => {
    const id = job.id;
    if (id === undefined) return;
    TrackedWorker.track(
      this.fetching,
      new Promise<void>((resolve) => this.awaitingStart.set(id, [...(this.awaitingStart.get(id) ?? []), resolve])),
    );
  });

  protected override moveToActive(
    ...args: Parameters<Worker<ScanJobPayload>['moveToActive']>
  ): ReturnType<Worker<ScanJobPayload>['moveToActive']> {
    const fetched = super.moveToActive(...args);
    TrackedWorker.track(this.fetching, fetched);
    return fetched;
  }

  override processJob(
    ...args: Parameters<Worker<ScanJobPayload>['processJob']>
  ): ReturnType<Worker<ScanJobPayload>['processJob']> {
    const processing = super.processJob(...args);
    TrackedWorker.track(this.processing, processing);
    const id = args[0].id ?? '';
    for (const release of this.awaitingStart.get(id) ?? []) release();
    this.awaitingStart.delete(id);
    return processing;
  }

  /**
   * Waits for fetches under way to reach processJob, at most `graceMs` and only while Redis
   * answers: with Redis unreachable a fetch cannot finish, and the job's lock expiry returns it.
   */
  async fetchesArrived(graceMs: number, redisAnswers: () => boolean): Promise<void> {
    const deadline = Date.now() + graceMs;
    while (this.fetching.size > 0 && redisAnswers() && Date.now() < deadline) {
      await Promise.race([Promise.allSettled([...this.fetching]), sleep(100)]);
    }
  }
}

function startBullMqWorker(
  o: BullMqTransportOptions,
  options: ScanWorkerOptions,
  log: QueueLog,
  report: (source: string, error: unknown) => void,
): ScanWorker {
  checkWorkerOptions(options);
  const maxStalledCount = options.maxStalledCount ?? 1;
  const connection = createWorkerConnection(o.redis, report);
  const running = new Map<string, RunningJob>();
  const finalFailures = new FinalFailureReports(options.onFinalFailure, log);
  let closeStarted = false;

  // Back to the queue without using up an attempt or counting a stall. If Redis is gone, the
  // lock expires instead and the stall check returns the job.
  const handBack = async (job: Job<unknown>, token: string | undefined): Promise<never> => {
    await job.moveToWait(token ?? '').catch((e: unknown) => report('worker', e));
    throw new WaitingError();
  };

  const runAttempt = async (job: Job<unknown>, token: string | undefined, entry: RunningJob): Promise<void> => {
    const payload = ScanJobPayload.safeParse(job.data);
    if (!payload.success || payload.data.scan_id !== job.id)
      throw new UnrecoverableError(`Job ${job.id} has no valid v1 scan payload.`);
    if (entry.handBack) return handBack(job, token);
    try {
      await options.processor({
        scanId: payload.data.scan_id,
        attempt: attemptOf(job),
        failedAttempts: job.attemptsMade,
        maxAttempts: job.opts.attempts ?? 1,
        signal: entry.controller.signal,
      });
    } catch (error) {
      if (entry.handBack) return handBack(job, token);
      if (isFinalError(error)) throw new UnrecoverableError((error as Error).message);
      throw error instanceof Error ? error : new Error(String(error));
    }
  };

  const processJob = (job: Job<unknown>, token?: string): Promise<void> => {
    const jobId = job.id ?? '';
    // A job fetched after close began (by a blocking fetch already under way) is handed back unrun.
    const entry: RunningJob = { controller: new AbortController(), handBack: closeStarted };
    running.set(jobId, entry);
    return runAttempt(job, token, entry).finally(() => {
      if (running.get(jobId) === entry) running.delete(jobId); // a re-fetch after a lost lock may own the slot now
    });
  };

  const worker = new TrackedWorker(SCAN_QUEUE_NAME, processJob, {
    connection,
    prefix: o.prefix,
    concurrency: options.concurrency,
    lockDuration: options.lockDurationMs ?? 30_000,
    stalledInterval: options.stalledIntervalMs ?? 30_000,
    maxStalledCount,
  });
  worker.on('error', (error) => report('worker', error));
  worker.on('stalled', (jobId) =>
    log('warn', 'scan job stalled: its worker stopped renewing the lock; it goes back to the queue', { scanId: jobId }),
  );
  // A lost lock means the job was removed or another worker owns it now: stop this copy.
  worker.on('lockRenewalFailed', (jobIds) => {
    for (const id of jobIds) running.get(id)?.controller.abort(lockLostAbortReason());
  });
  worker.on('failed', (job, error) => {
    // finishedOn is set only when the job moved to failed for good; otherwise a retry is scheduled.
    if (job?.id === undefined || job.finishedOn === undefined) return;
    finalFailures.report(job.id, finalFailureOf(job, error, maxStalledCount));
  });

  let closing: Promise<void> | undefined;
  let forceNow = (): void => {};
  const forced = new Promise<void>((resolve) => (forceNow = resolve));
  const allFinished = async (): Promise<void> => {
    while (worker.processing.size > 0) await Promise.allSettled([...worker.processing]);
  };

  return {
    close({ force = false } = {}) {
      closing ??= (async () => {
        closeStarted = true;
        // Not BullMQ's graceful close: it first disconnects its blocking connection and waits
        // for 'end', which never comes while that client is reconnecting, so it would hang for
        // as long as Redis is down, and after. Pause (no Redis call) stops fetching instead,
        // and the in-flight set says when every active job's outcome is written.
        await worker.pause(true).catch((error: unknown) => report('worker', error));
        await worker.fetchesArrived(FETCH_ARRIVAL_GRACE_MS, () => connection.status === 'ready');
        const finished = allFinished();
        await Promise.race([finished, forced.then(() => withinForceCloseGrace(finished))]);
        await worker.close(true).catch((error: unknown) => report('worker', error));
        await finalFailures.settled();
        await closeConnection(connection);
      })();
      if (force) {
        for (const job of running.values()) {
          job.handBack = true;
          job.controller.abort(shutdownAbortReason());
        }
        forceNow();
      }
      return closing;
    },
  };
}
