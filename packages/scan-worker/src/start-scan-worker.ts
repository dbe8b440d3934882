import { availableParallelism } from 'node:os';
import { Registry } from 'prom-client';
import { createEngine } from '@reposcan/core';
import type { Config } from '@reposcan/config';
import type { QueueTransport } from '@reposcan/queue';
import { CarriedScans, CommitCache, FileStore } from '@reposcan/storage';
import type { ScanStore } from '@reposcan/storage';
import { commitCacheSettings, engineLimitsFromConfig, FaultInjector } from '@reposcan/runtime';
import type { Logger } from '@reposcan/runtime';
import { describeSourcePolicy, sourceSettingsFromConfig, webhookPolicyFromConfig } from '@reposcan/sources';
import type { SourcePolicy } from '@reposcan/sources';
import { fullGarbageCollection } from './collect-garbage.js';
import { classifyFailure } from './classify-failure.js';
import { createScanProcessor } from './scan-processor.js';
import { TokenCaches } from './token-caches.js';
import { createScanMetrics } from './worker-metrics.js';
import { createDeliveryProcessor } from './webhook-delivery.js';

/** Webhook deliveries at once per process: each waits on a receiver, none uses much CPU. */
const DELIVERY_CONCURRENCY = 8;

export interface RunningWorker {
  /** Graceful: waits for running scans. `force` hands them back to the queue instead (may follow a graceful call). */
  close(options?: { force?: boolean }): Promise<void>;
}

/**
 * Consume scan jobs from `transport` in this process. Used by `ROLE=worker` and, in the same
 * form, by the embedded mode and `ROLE=all`, where `registry` is the API's so one /metrics shows both.
 */
export function startScanWorker(deps: {
  config: Config;
  transport: QueueTransport;
  store: ScanStore;
  log: Logger;
  registry?: Registry;
}): RunningWorker {
  const { config, store, log } = deps;
  const metrics = createScanMetrics(deps.registry ?? new Registry());
  // One engine for the process: its tokenizer pools load their tables once, not once per job.
  const engine = createEngine({ tokenThreads: Math.max(1, availableParallelism()) });
  // Every thread started before the first scan (the read threads, the first walk's, every
  // tokenizer): one started mid-scan costs that scan its start-up and a cold JIT (~0.2 s), and
  // only a scan with two batches at once would start the second tokenizer.
  engine
    .warm({ encoding: config.tokenEncoding })
    .catch((error: unknown) => log.warn({ err: error }, 'tokenizer threads failed to start; scans will retry'));
  const sources = sourceSettingsFromConfig(config);
  const processor = createScanProcessor({
    store,
    sources,
    limits: engineLimitsFromConfig(config),
    scanTimeoutMs: config.scanTimeoutSeconds * 1000,
    engine,
    tokenCaches: new TokenCaches(store, config.tokenCacheMaxEntries, log),
    log,
    metrics,
    faults: new FaultInjector(config.faultInjection),
    collectGarbage: fullGarbageCollection(),
    minFreeDiskRatio: config.minFreeDiskRatio,
    credentials: deps.transport.credentials,
    commitCache: { cache: new CommitCache(store), settings: commitCacheSettings(config) },
    ...(config.fileCacheDays > 0
      ? {
          fileCache: {
            store: new FileStore(store.fileCacheDir()),
            settings: commitCacheSettings(config),
            maxBlobBytes: sources.maxBlobBytes,
          },
          carriedScans: new CarriedScans(store),
        }
      : {}),
  });
  const worker = deps.transport.startWorker({
    concurrency: config.workerConcurrency,
    lockDurationMs: config.jobLockSeconds * 1000,
    stalledIntervalMs: config.jobLockSeconds * 1000,
    processor,
    onFinalFailure: async (scanId, reason) => {
      // Reached when no attempt could record an outcome itself: the job killed its worker twice,
      // or the attempt's own write of its failure failed.
      const { code, message } =
        reason.code === 'WORKER_CRASHED'
          ? {
              code: 'WORKER_CRASHED' as const,
              message:
                'The scan stopped its worker more than once (out of memory or killed) and was given up. Scan a smaller part of the repository.',
            }
          : classifyFailure(reason.error);
      metrics.scanFinished('failed', code);
      await deps.transport.credentials.delete(scanId).catch(() => {});
      await store
        .updateState(scanId, (s) => ({
          ...s,
          state: 'failed',
          attempt: Math.max(s.attempt, reason.attempts),
          completed_at: new Date().toISOString(),
          error: { code, message },
        }))
        .catch((error: unknown) => log.warn({ err: error, scanId }, 'could not record final failure'));
    },
  });
  // Each role reads its own environment: say which sources this one takes, so a worker whose
  // policy differs from the API's shows it at start, not on the first scan it refuses.
  log.info(`this worker ${describeSourcePolicy(sources)}`);
  // Announced while it runs, so an API can refuse at submit a source that no live worker accepts.
  const { allowedLocalRoots, allowedHosts, allowHttp, allowPrivateHosts } = sources;
  const announcement = deps.transport.workers.announce({
    sources: { allowedLocalRoots, allowedHosts, allowHttp, allowPrivateHosts } satisfies SourcePolicy,
  });
  log.info({ concurrency: config.workerConcurrency, queue: deps.transport.kind }, 'scan worker started');
  // Completion webhooks run beside scans, never inside a scan's job: a receiver that hangs
  // holds a delivery slot for WEBHOOK_TIMEOUT_SECONDS at most, and no scan at all.
  const deliveries = deps.transport.startDeliveryWorker({
    concurrency: DELIVERY_CONCURRENCY,
    retryBaseMs: config.webhookRetryBaseMs,
    closeGraceMs: config.webhookTimeoutSeconds * 1000 + 1_000,
    processor: createDeliveryProcessor({
      store,
      secret: config.webhookSecret,
      policy: webhookPolicyFromConfig(config),
      timeoutMs: config.webhookTimeoutSeconds * 1000,
      log,
    }),
  });
  let closing: Promise<void> | undefined;
  return {
    close(options) {
      // The queue worker runs one close; a later forced call cuts the same one short.
      const closed = worker.close(options);
      closing ??= Promise.all([announcement.stop(), closed, deliveries.close()]).then(() => engine.close());
      return closing;
    },
  };
}
