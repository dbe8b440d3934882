import { setTimeout as sleep } from 'node:timers/promises';
import type { RedisTarget } from '@reposcan/config';
import { ScanId, WEBHOOK_MAX_ATTEMPTS, WEBHOOK_RETRY_FACTORS } from '@reposcan/contracts';
import { Queue, Worker } from 'bullmq';
import type { Job } from 'bullmq';
import { z } from 'zod';
import { KEEP_COMPLETED, KEEP_FAILED } from './job-contract.js';
import { closeConnection, createProducerConnection, createWorkerConnection } from './redis-connections.js';

// Completion webhooks: a queue of its own, so a receiver that hangs or fails never holds a scan
// worker. One job per scan (job id = scan id, so a second enqueue is a no-op), payload
// `{v: 1, scan_id}` as for scans: the URL stays on the volume. A processor that throws is run
// again after the next delay of WEBHOOK_RETRY_FACTORS × retryBaseMs, until WEBHOOK_MAX_ATTEMPTS;
// it records each attempt's outcome itself, the last one included.

export const DELIVERY_QUEUE_NAME = 'webhooks';
export const DELIVERY_JOB_NAME = 'webhook.deliver';

export const DeliveryJobPayload: z.ZodType<{ v: 1; scan_id: string }> = z.strictObject({
  v: z.literal(1),
  scan_id: ScanId,
});

export interface DeliveryContext {
  scanId: string;
  /** 1-based: this attempt and every earlier one. */
  attempt: number;
  maxAttempts: number;
}

/** Delivers once; throws when the attempt failed and should be retried (if attempts remain). */
export type DeliveryProcessor = (ctx: DeliveryContext) => Promise<void>;

export interface DeliveryQueue {
  /** Queues the scan's delivery; a second enqueue of the same scan is a no-op. */
  enqueue(scanId: string): Promise<void>;
  close(): Promise<void>;
}

export interface DeliveryWorkerOptions {
  concurrency: number;
  processor: DeliveryProcessor;
  /** WEBHOOK_RETRY_BASE_MS: the unit of the retry delays. */
  retryBaseMs: number;
  /** How long a graceful close waits for attempts under way (at least the attempt timeout). */
  closeGraceMs: number;
}

export interface DeliveryWorker {
  close(): Promise<void>;
}

/** The wait before retry number `failedAttempts` (1 after the first failure). */
export function deliveryRetryDelayMs(failedAttempts: number, retryBaseMs: number): number {
  const factor = WEBHOOK_RETRY_FACTORS[Math.min(failedAttempts, WEBHOOK_RETRY_FACTORS.length) - 1] ?? 1;
  return factor * retryBaseMs;
}

/** The embedded mode's delivery queue: the same rules in this process; jobs do not survive a restart. */
export function createMemoryDeliveries(): {
  queue: DeliveryQueue;
  startWorker: (o: DeliveryWorkerOptions) => DeliveryWorker;
} {
  const known = new Set<string>();
  const waiting: { scanId: string; attempt: number }[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let worker: { run: () => void } | null = null;
  let closed = false;
  return {
    queue: {
      enqueue(scanId) {
        return new Promise<void>((resolve) => {
          if (closed || known.has(scanId)) return resolve();
          known.add(scanId);
          waiting.push({ scanId, attempt: 1 });
          worker?.run();
          resolve();
        });
      },
      close() {
        closed = true;
        for (const timer of timers) clearTimeout(timer);
        return Promise.resolve();
      },
    },
    startWorker(o) {
      const running = new Set<Promise<void>>();
      let accepting = true;
      // The processor records and logs each attempt's outcome itself.
      const attempt = async (job: { scanId: string; attempt: number }): Promise<void> => {
        try {
          await o.processor({ scanId: job.scanId, attempt: job.attempt, maxAttempts: WEBHOOK_MAX_ATTEMPTS });
        } catch {
          if (job.attempt >= WEBHOOK_MAX_ATTEMPTS || closed) return;
          const timer = setTimeout(
            () => {
              timers.delete(timer);
              waiting.push({ scanId: job.scanId, attempt: job.attempt + 1 });
              run();
            },
            deliveryRetryDelayMs(job.attempt, o.retryBaseMs),
          );
          timer.unref();
          timers.add(timer);
        }
      };
      const run = (): void => {
        while (accepting && running.size < o.concurrency && waiting.length > 0) {
          const job = waiting.shift();
          if (!job) break;
          const done: Promise<void> = attempt(job).finally(() => {
            running.delete(done);
            run();
          });
          running.add(done);
        }
      };
      worker = { run };
      setImmediate(run);
      return {
        async close() {
          accepting = false;
          worker = null;
          await Promise.race([Promise.allSettled([...running]), sleep(o.closeGraceMs)]);
        },
      };
    },
  };
}

export interface BullMqDeliveryOptions {
  redis: RedisTarget;
  prefix: string;
  report: (source: string, error: unknown) => void;
}

/** Redis: any API or worker process queues, every worker process delivers. */
export function createBullMqDeliveries(o: BullMqDeliveryOptions): {
  queue: DeliveryQueue;
  startWorker: (w: DeliveryWorkerOptions) => DeliveryWorker;
} {
  let producer: { queue: Queue; connection: ReturnType<typeof createProducerConnection> } | null = null;
  // Made on first use: a process that never sees a callback_url opens no connection for it.
  const producerQueue = (): Queue => {
    if (producer) return producer.queue;
    const connection = createProducerConnection(o.redis, o.report);
    const queue = new Queue(DELIVERY_QUEUE_NAME, { connection, prefix: o.prefix });
    queue.on('error', (error) => o.report('webhook queue', error));
    producer = { queue, connection };
    return queue;
  };
  return {
    queue: {
      async enqueue(scanId) {
        const payload = DeliveryJobPayload.parse({ v: 1, scan_id: scanId });
        await producerQueue().add(DELIVERY_JOB_NAME, payload, {
          jobId: scanId,
          attempts: WEBHOOK_MAX_ATTEMPTS,
          backoff: { type: 'webhook' },
          removeOnComplete: KEEP_COMPLETED,
          removeOnFail: KEEP_FAILED,
        });
      },
      async close() {
        if (!producer) return;
        const { queue, connection } = producer;
        await queue.close().catch((error: unknown) => o.report('webhook queue', error));
        await closeConnection(connection);
      },
    },
    startWorker(w) {
      const connection = createWorkerConnection(o.redis, o.report);
      const worker = new Worker(
        DELIVERY_QUEUE_NAME,
        async (job: Job<unknown>) => {
          const payload = DeliveryJobPayload.parse(job.data);
          await w.processor({
            scanId: payload.scan_id,
            attempt: job.attemptsMade + 1,
            maxAttempts: job.opts.attempts ?? WEBHOOK_MAX_ATTEMPTS,
          });
        },
        {
          connection,
          prefix: o.prefix,
          concurrency: w.concurrency,
          settings: { backoffStrategy: (attemptsMade: number) => deliveryRetryDelayMs(attemptsMade, w.retryBaseMs) },
        },
      );
      worker.on('error', (error) => o.report('webhook worker', error));
      return {
        async close() {
          // Attempts under way have their own timeout; past the grace a job left active comes
          // back through the stall check and is delivered again (receivers dedupe by scan_id).
          await Promise.race([worker.close(), sleep(w.closeGraceMs)]);
          await worker.close(true).catch((error: unknown) => o.report('webhook worker', error));
          await closeConnection(connection);
        },
      };
    },
  };
}
