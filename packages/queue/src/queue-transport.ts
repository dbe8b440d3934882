import type { NotReadyReason } from '@reposcan/contracts';
import type { CredentialVault } from './credential-vault.js';
import type { DeliveryQueue, DeliveryWorker, DeliveryWorkerOptions } from './delivery-queue.js';
import type { ScanProcessor } from './job-contract.js';
import type { QueueLog } from './queue-log.js';
import type { StateSignals } from './state-signals.js';
import type { WindowCounters } from './window-counters.js';
import type { WorkerRegistry } from './worker-registry.js';

export type ScanJobState = 'waiting' | 'active' | 'delayed' | 'completed' | 'failed' | 'absent';

export interface EnqueueOptions {
  client?: string;
}

/** The producer side, used by the API and the janitor. */
export interface ScanQueue {
  /**
   * Queues a scan under jobId = scanId. A second enqueue of an id the queue still holds is a
   * no-op. Rejects at once with ScanError QUEUE_UNAVAILABLE (Redis down) or QUEUE_FULL.
   * `client` (who asked) gets it a fair share of the workers (fair-share.ts); without one (a
   * re-enqueue of a lost job) the scan goes ahead of every client's.
   */
  enqueue(scanId: string, options?: EnqueueOptions): Promise<void>;
  /** Scans accepted and not running: waiting, plus delayed for a retry. */
  waitingCount(): Promise<number>;
  /** Scans a worker is running right now, across every worker on this queue. */
  activeCount(): Promise<number>;
  jobState(scanId: string): Promise<ScanJobState>;
  /** Removes a waiting, delayed or finished job; an active one is left for the worker to cancel. */
  remove(scanId: string): Promise<'removed' | 'active' | 'absent'>;
  /**
   * Whether a scan could be enqueued now: null when the queue's store takes a write in the
   * queue's keyspace, else why not. Never hangs: answers within about a second.
   */
  checkWrites(): Promise<NotReadyReason | null>;
  close(): Promise<void>;
}

export interface FinalFailure {
  /** WORKER_CRASHED: the job stalled more often than maxStalledCount (its worker died under it). */
  code: 'WORKER_CRASHED' | 'FAILED';
  message: string;
  /** What the last run threw (for WORKER_CRASHED, the queue's own stall error). */
  error: Error;
  /** Runs the job had, crashed ones included: the last `attempt` its processor was given. */
  attempts: number;
}

export interface ScanWorkerOptions {
  concurrency: number;
  processor: ScanProcessor;
  /** Called once when a job has failed for good (thrown final error, or stalled more than allowed = worker crashed). */
  onFinalFailure?: (scanId: string, reason: FinalFailure) => Promise<void>;
  lockDurationMs?: number;
  stalledIntervalMs?: number;
  maxStalledCount?: number;
}

export interface ScanWorker {
  /**
   * Graceful by default: stop taking jobs, wait for the active ones and for pending
   * onFinalFailure calls. `force` aborts the active jobs' signals instead, gives them a few
   * seconds to hand their jobs back to the queue (no attempt is used up), then closes.
   */
  close(options?: { force?: boolean }): Promise<void>;
}

export interface QueueTransport {
  queue: ScanQueue;
  /** Word between processes that a scan's state changed: whoever waits on it reads it again at once. */
  stateSignals: StateSignals;
  /** Which workers are alive, and what each announced about itself (its source policy). */
  workers: WorkerRegistry;
  /**
   * Per-client counts over time windows (rate limits): this process's in memory, the
   * deployment's on Redis. Rejects at once, like an enqueue, when Redis cannot count.
   */
  counters: WindowCounters;
  /** Requests' git credentials on their way to a worker: sealed on Redis, in memory embedded. */
  credentials: CredentialVault;
  startWorker(options: ScanWorkerOptions): ScanWorker;
  /** Completion webhooks: a queue of their own, apart from scans (delivery-queue.ts). */
  deliveries: DeliveryQueue;
  startDeliveryWorker(options: DeliveryWorkerOptions): DeliveryWorker;
  /** Closes every worker started here (gracefully), then the queue. */
  close(): Promise<void>;
  kind: 'bullmq' | 'memory';
}

export interface TransportOptions {
  maxWaiting: number;
  /** Tries per scan, counting the first; a worker crash does not use one up. */
  attempts: number;
  backoffMs?: number;
  log?: QueueLog;
}

export function checkTransportOptions(o: TransportOptions): void {
  if (!Number.isInteger(o.maxWaiting) || o.maxWaiting < 1)
    throw new RangeError(`maxWaiting must be a positive integer, got ${o.maxWaiting}`);
  if (!Number.isInteger(o.attempts) || o.attempts < 1)
    throw new RangeError(`attempts must be a positive integer, got ${o.attempts}`);
  if (o.backoffMs !== undefined && !(o.backoffMs >= 0))
    throw new RangeError(`backoffMs must be >= 0, got ${o.backoffMs}`);
}

export function checkWorkerOptions(o: ScanWorkerOptions): void {
  if (!Number.isInteger(o.concurrency) || o.concurrency < 1)
    throw new RangeError(`concurrency must be a positive integer, got ${o.concurrency}`);
}
