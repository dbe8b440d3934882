import { loadConfig } from '@reposcan/config';
import type { Config } from '@reposcan/config';
import { lowerProcessPriority } from '@reposcan/core';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { createBullMqTransport } from '@reposcan/queue';
import { createLogger, janitorSettings, openScanStore, startJanitor } from '@reposcan/runtime';
import type { ScanStore } from '@reposcan/storage';
import { checkSourcesAtStart } from '@reposcan/sources';
import { closeWithinGrace } from './close-within-grace.js';
import { serveWorkerHttp } from './serve-worker-http.js';
import { startScanWorker } from './start-scan-worker.js';

/**
 * `ROLE=worker`: a process that only consumes scan jobs from Redis, with probes and metrics on
 * METRICS_PORT when set. Closes cleanly on SIGTERM/SIGINT.
 */
export async function runWorkerProcess(config: Config = loadConfig()): Promise<void> {
  const log = createLogger(config.logLevel, 'reposcan-worker');
  if (!config.redis)
    throw new Error(
      'ROLE=worker needs Redis (REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS): a worker process takes its jobs from Redis.',
    );
  await checkSourcesAtStart(config, (message) => log.warn(message));
  // Scans are batch work: every thread Node has started, and (inheriting it) every thread of ours.
  if (config.workerNice > 0 && !lowerProcessPriority(config.workerNice))
    log.warn({ nice: config.workerNice }, "could not lower the worker's CPU priority");
  const transport = createBullMqTransport({
    credentialsKey: config.credentialsKey,
    redis: config.redis,
    prefix: config.queuePrefix,
    maxWaiting: config.maxQueuedScans,
    attempts: config.jobAttempts,
    log: (level, message, meta) => log[level]({ ...meta }, message),
  });
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'reposcan_' });
  let stopping = false;
  let store: ScanStore | null = null;
  // Bound before any work starts: a taken METRICS_PORT stops the process with one line, not a
  // stack trace after the worker has already taken a scan.
  const http =
    config.metricsPort === null
      ? null
      : await serveWorkerHttp({
          host: config.host,
          port: config.metricsPort,
          version: config.version,
          registry,
          queue: transport.queue,
          stopping: () => stopping,
          diskStatus: () => (store ? store.diskStatus() : Promise.resolve(null)),
          minFreeDiskRatio: config.minFreeDiskRatio,
        });
  if (http) log.info({ host: config.host, port: http.port }, 'worker metrics and probes listening');
  store = await openScanStore(config.dataDir, transport, log);
  const worker = startScanWorker({ config, transport, store, log, registry });
  const janitor = startJanitor({
    store,
    queue: transport.queue,
    deliveries: transport.deliveries,
    log,
    ...janitorSettings(config, true),
  });
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    log.info({ signal, graceSeconds: config.shutdownGraceSeconds }, 'stopping: finishing active scans');
    // Stop taking work, let active jobs finish within the grace (then hand them back), close Redis last.
    janitor
      .stop()
      .then(() => closeWithinGrace(worker, config.shutdownGraceSeconds * 1000, log))
      .then(() => transport.close())
      .then(() => http?.close())
      .then(
        () => process.exit(0),
        (error: unknown) => {
          log.error({ err: error }, 'unclean shutdown');
          process.exit(1);
        },
      );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}
