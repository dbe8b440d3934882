import { backoffDelayMs, isFinalError, shutdownAbortReason, withinForceCloseGrace } from './failure-policy.js';
import { createMemoryDeliveries } from './delivery-queue.js';
import type { DeliveryWorker } from './delivery-queue.js';
import { FAIR_SHARE_WINDOW_MS, fairPriority } from './fair-share.js';
import { DEFAULT_BACKOFF_MS, KEEP_COMPLETED, KEEP_FAILED, ScanJobPayload } from './job-contract.js';
import { invalidScanId, queueFull, queueUnavailable } from './queue-errors.js';
import { FinalFailureReports } from './final-failure-reports.js';
import { consoleLog } from './queue-log.js';
import { createMemoryCredentialVault } from './credential-vault.js';
import { createLocalStateSignals } from './state-signals.js';
import { LocalWindowCounters } from './window-counters.js';
import { createMemoryWorkerRegistry } from './worker-registry.js';
import { checkTransportOptions, checkWorkerOptions } from './queue-transport.js';
import type {
  QueueTransport,
  ScanJobState,
  ScanQueue,
  ScanWorker,
  ScanWorkerOptions,
  TransportOptions,
} from './queue-transport.js';

// The embedded mode's queue: the BullMQ transport's semantics (idempotent ids, a bound on
// waiting jobs, retries with backoff, final errors, graceful close) inside one process. The
// processor runs on this event loop; it offloads CPU work itself. Jobs do not survive a
// restart, and no job can stall: a crash takes the queue down with it.

interface MemoryJob {
  id: string;
  state: Exclude<ScanJobState, 'absent'>;
  /** As BullMQ's: 0 goes first, then 1, 2, …; arrival order within one. */
  priority: number;
  failedAttempts: number;
  retryTimer?: NodeJS.Timeout;
}

interface RunningAttempt {
  controller: AbortController;
  /** Aborted by a forced close: whatever the processor does next, the job goes back to the queue. */
  handBack: boolean;
  settled: Promise<void>;
}

interface MemoryWorker {
  hasCapacity(): boolean;
  start(job: MemoryJob): void;
}

export function createMemoryTransport(o: TransportOptions): QueueTransport {
  checkTransportOptions(o);
  const log = o.log ?? consoleLog;
  const backoffMs = o.backoffMs ?? DEFAULT_BACKOFF_MS;
  const jobs = new Map<string, MemoryJob>();
  const waiting: MemoryJob[] = []; // by priority, then arrival
  const counters = new LocalWindowCounters();
  const finished = { completed: new Map<string, number>(), failed: new Map<string, number>() }; // id → finish time, oldest first
  const workers = new Set<MemoryWorker>();
  const closers: ScanWorker[] = [];
  let closed = false;
  let dispatchScheduled = false;

  // Dispatch on a later turn so enqueue() returns before any processor starts, as with Redis.
  const scheduleDispatch = (): void => {
    if (dispatchScheduled) return;
    dispatchScheduled = true;
    setImmediate(() => {
      dispatchScheduled = false;
      for (const worker of workers) {
        while (worker.hasCapacity() && waiting.length > 0) {
          const job = waiting.shift();
          if (job) worker.start(job);
        }
      }
    });
  };

  const makeWaiting = (job: MemoryJob, first = false): void => {
    job.state = 'waiting';
    if (first) waiting.unshift(job);
    else {
      const behind = waiting.findIndex((other) => other.priority > job.priority);
      waiting.splice(behind < 0 ? waiting.length : behind, 0, job);
    }
    scheduleDispatch();
  };

  const finish = (job: MemoryJob, state: 'completed' | 'failed'): void => {
    job.state = state;
    const kept = finished[state];
    const keep = state === 'completed' ? KEEP_COMPLETED : { ...KEEP_FAILED, count: Infinity };
    kept.set(job.id, Date.now());
    for (const [id, at] of kept) {
      if (kept.size <= keep.count && Date.now() - at <= keep.age * 1000) break;
      kept.delete(id);
      jobs.delete(id);
    }
  };

  const forget = (job: MemoryJob): void => {
    clearTimeout(job.retryTimer);
    const index = waiting.indexOf(job);
    if (index >= 0) waiting.splice(index, 1);
    finished.completed.delete(job.id);
    finished.failed.delete(job.id);
    jobs.delete(job.id);
  };

  const countWaiting = (): number => waiting.length + [...jobs.values()].filter((j) => j.state === 'delayed').length;

  const queue: ScanQueue = {
    enqueue: (scanId, options = {}) =>
      answer(() => {
        if (closed) throw queueUnavailable();
        if (!ScanJobPayload.safeParse({ v: 1, scan_id: scanId }).success) throw invalidScanId(scanId);
        if (jobs.has(scanId)) return;
        if (countWaiting() >= o.maxWaiting) throw queueFull(o.maxWaiting);
        const priority =
          options.client === undefined
            ? 0
            : fairPriority(counters.addNow('fair-share', options.client, FAIR_SHARE_WINDOW_MS).count);
        const job: MemoryJob = { id: scanId, state: 'waiting', priority, failedAttempts: 0 };
        jobs.set(scanId, job);
        makeWaiting(job);
      }),
    waitingCount: () => answer(countWaiting),
    activeCount: () => answer(() => [...jobs.values()].filter((j) => j.state === 'active').length),
    jobState: (scanId) => answer(() => jobs.get(scanId)?.state ?? 'absent'),
    remove: (scanId) =>
      answer(() => {
        const job = jobs.get(scanId);
        if (!job) return 'absent';
        if (job.state === 'active') return 'active';
        forget(job);
        return 'removed';
      }),
    checkWrites: () => answer(() => null),
    close: () =>
      answer(() => {
        closed = true;
        for (const job of jobs.values()) clearTimeout(job.retryTimer);
      }),
  };

  const startWorker = (options: ScanWorkerOptions): ScanWorker => {
    checkWorkerOptions(options);
    const running = new Map<string, RunningAttempt>();
    const finalFailures = new FinalFailureReports(options.onFinalFailure, log);
    let accepting = true;

    const runAttempt = async (job: MemoryJob, entry: RunningAttempt): Promise<void> => {
      try {
        await options.processor({
          scanId: job.id,
          attempt: job.failedAttempts + 1,
          failedAttempts: job.failedAttempts,
          maxAttempts: o.attempts,
          signal: entry.controller.signal,
        });
        finish(job, 'completed');
      } catch (error) {
        if (entry.handBack) return makeWaiting(job, true);
        job.failedAttempts += 1;
        if (!isFinalError(error) && job.failedAttempts < o.attempts) {
          job.state = 'delayed';
          job.retryTimer = setTimeout(() => makeWaiting(job), backoffDelayMs(job.failedAttempts, backoffMs));
          job.retryTimer.unref();
          return;
        }
        finish(job, 'failed');
        finalFailures.report(job.id, {
          code: 'FAILED',
          message: error instanceof Error ? error.message : String(error),
          attempts: job.failedAttempts,
          error: error instanceof Error ? error : new Error(String(error)),
        });
      }
    };

    const worker: MemoryWorker = {
      hasCapacity: () => accepting && !closed && running.size < options.concurrency,
      start(job) {
        job.state = 'active';
        const entry: RunningAttempt = {
          controller: new AbortController(),
          handBack: false,
          settled: Promise.resolve(),
        };
        running.set(job.id, entry);
        entry.settled = runAttempt(job, entry).finally(() => {
          running.delete(job.id);
          scheduleDispatch();
        });
      },
    };
    workers.add(worker);
    scheduleDispatch();

    let closing: Promise<void> | undefined;
    let forceNow = (): void => {};
    const forced = new Promise<void>((resolve) => (forceNow = resolve));
    const closer: ScanWorker = {
      close({ force = false } = {}) {
        closing ??= (async () => {
          accepting = false;
          workers.delete(worker);
          const finished = Promise.allSettled([...running.values()].map((entry) => entry.settled));
          await Promise.race([finished, forced.then(() => withinForceCloseGrace(finished))]);
          await finalFailures.settled();
        })();
        if (force) {
          for (const entry of running.values()) {
            entry.handBack = true;
            entry.controller.abort(shutdownAbortReason());
          }
          forceNow();
        }
        return closing;
      },
    };
    closers.push(closer);
    return closer;
  };

  const deliveries = createMemoryDeliveries();
  const deliveryWorkers: DeliveryWorker[] = [];
  return {
    kind: 'memory',
    queue,
    stateSignals: createLocalStateSignals(),
    workers: createMemoryWorkerRegistry(),
    credentials: createMemoryCredentialVault(),
    counters,
    startWorker,
    deliveries: deliveries.queue,
    startDeliveryWorker(options) {
      const worker = deliveries.startWorker(options);
      deliveryWorkers.push(worker);
      return worker;
    },
    async close() {
      await Promise.all([...closers, ...deliveryWorkers].map((w) => w.close()));
      await queue.close();
      await deliveries.queue.close();
    },
  };
}

/** Runs fn now and answers through a promise, so a refusal arrives as a rejection, as from Redis. */
function answer<T>(fn: () => T): Promise<T> {
  return new Promise((resolve) => resolve(fn()));
}
