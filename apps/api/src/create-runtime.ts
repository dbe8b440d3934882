import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Express } from 'express';
import type { Config } from '@reposcan/config';
import { buildOpenApiDocument } from '@reposcan/contracts';
import { createBullMqTransport, createMemoryTransport } from '@reposcan/queue';
import type { QueueLog, QueueTransport } from '@reposcan/queue';
import { CommitCache } from '@reposcan/storage';
import type { ScanStore } from '@reposcan/storage';
import {
  commitCacheSettings,
  createLogger,
  engineLimitsFromConfig,
  FaultInjector,
  janitorSettings,
  listenOn,
  openScanStore,
  startJanitor,
} from '@reposcan/runtime';
import type { Logger, RunningJanitor } from '@reposcan/runtime';
import { checkSourcesAtStart, sourceSettingsFromConfig, webhookPolicyFromConfig } from '@reposcan/sources';
import { pooledCounting } from '@reposcan/mcp';
import { closeWithinGrace, startScanWorker } from '@reposcan/scan-worker';
import type { RunningWorker } from '@reposcan/scan-worker';
import { createApp } from './app.js';
import { ApiKeyRing } from './http/api-keys.js';
import { corsPolicy } from './http/cors-policy.js';
import { EventStreams } from './http/event-streams.js';
import { livenessProbe } from './http/liveness-probe.js';
import { createMetrics } from './http/metrics.js';
import { queueDashboard } from './http/queue-dashboard.js';
import { InspectService } from './services/inspect-service.js';
import { ResultReuse } from './services/result-reuse.js';
import { ScanService } from './services/scan-service.js';
import { WorkerCoverage } from './services/worker-coverage.js';

export interface Runtime {
  app: Express;
  config: Config;
  log: Logger;
  store: ScanStore;
  transport: QueueTransport;
  worker: RunningWorker | null;
  janitor: RunningJanitor;
  /** The server bound to config.host:config.port (bound before anything else starts). */
  listen(): Promise<Server>;
  /** Stop taking requests and work, finish active jobs, close Redis last. */
  close(): Promise<void>;
}

export interface RuntimeOptions {
  log?: Logger;
  /** Test seam: how long a watched scan goes unread at most when no signal came (waiting requests and event streams). */
  statePollMs?: number;
}

/**
 * Slow clients must not hold sockets forever (slowloris); uploads get the longest budget. Node
 * enforces the header and request timeouts only when it checks its connections, every 30 s by
 * default, so a client sending headers slowly was cut off after 30 to 60 s. Checked every second,
 * the cut-off comes 30 to 31 s after the connection's request began, as README says.
 */
const SERVER_TIMEOUTS = {
  headersTimeout: 30_000,
  requestTimeout: 300_000,
  keepAliveTimeout: 5_000,
  connectionsCheckingInterval: 1_000,
} as const;

/**
 * The composition root of the API process: the one place that turns configuration into
 * objects. `ROLE=all` (the embedded default) also runs a worker in this process.
 *
 * The port is bound first: when it is taken (or HOST is wrong) this throws a ConfigError that
 * names the variable, before Redis, the janitor or a worker has started. Requests that arrive
 * while the rest starts wait for it.
 */
export async function createRuntime(config: Config, options: RuntimeOptions = {}): Promise<Runtime> {
  const log = options.log ?? createLogger(config.logLevel, 'reposcan-api');
  // Previews clone here and submitted local paths are judged here: settings they cannot use are told now.
  await checkSourcesAtStart(config, (message) => log.warn(message));
  let handle: ((req: IncomingMessage, res: ServerResponse) => void) | null = null;
  const early: [IncomingMessage, ServerResponse][] = [];
  const server = createServer(SERVER_TIMEOUTS, (req, res) => (handle ? handle(req, res) : early.push([req, res])));
  await listenOn(server, config.port, config.host, 'PORT');
  // Read before anything else starts: a bad key file stops the process with a ConfigError.
  const apiKeys = await ApiKeyRing.open({ file: config.apiKeysFile, fixed: config.apiKeys, log }).catch(
    (error: unknown) => {
      server.close();
      throw error;
    },
  );
  if (apiKeys)
    log.info(
      { keys: (await apiKeys.names()).length, protectOpsRoutes: config.protectOpsRoutes },
      'API keys on: every /v1 request needs Authorization: Bearer <key>',
    );
  else if (config.protectOpsRoutes)
    log.warn(
      'PROTECT_OPS_ROUTES is set but no API key is configured (API_KEYS_FILE, API_KEYS): /metrics and the queue dashboard stay open',
    );
  const queueLog: QueueLog = (level, message, meta) => log[level]({ ...meta }, message);
  const transport = config.redis
    ? createBullMqTransport({
        credentialsKey: config.credentialsKey,
        redis: config.redis,
        prefix: config.queuePrefix,
        maxWaiting: config.maxQueuedScans,
        attempts: config.jobAttempts,
        log: queueLog,
      })
    : createMemoryTransport({ maxWaiting: config.maxQueuedScans, attempts: config.jobAttempts });
  // This process hears every state announcement: a request waiting on a scan answers as soon as
  // the worker (here or in another process) has written it.
  transport.stateSignals.startListening();
  const store = await openScanStore(config.dataDir, transport, log).catch(async (error: unknown) => {
    server.close();
    await transport.close();
    throw error;
  });
  // Every API process sweeps too: a scan accepted here whose enqueue was lost is found again.
  const janitor = startJanitor({
    store,
    queue: transport.queue,
    deliveries: transport.deliveries,
    log,
    ...janitorSettings(config, config.role === 'all'),
  });
  const inspect = new InspectService({
    concurrency: config.inspectConcurrency,
    timeoutMs: config.inspectTimeoutSeconds * 1000,
  });
  // MCP pages are counted on one token thread per encoding, started by the first page read: a
  // page's counts (and the tables' first load) would otherwise hold the event loop.
  const mcpCounting = pooledCounting(1);
  const eventStreams = new EventStreams({ perClient: config.maxEventStreamsPerClient, total: config.maxEventStreams });
  // `scans` is made just below; the gauges read it only when scraped.
  const openApi = buildOpenApiDocument(config.version);
  const metrics = createMetrics(
    transport.queue,
    () => inspect.inFlight,
    { eventStreamsOpen: () => eventStreams.size, stateWatchers: () => scans.watchers.size },
    Object.keys(openApi.paths ?? {}),
  );
  const scans: ScanService = new ScanService({
    store,
    queue: transport.queue,
    signals: transport.stateSignals,
    ...(options.statePollMs === undefined ? {} : { pollMs: options.statePollMs }),
    onStateRead: () => metrics.stateReads.inc(),
    encoding: config.tokenEncoding,
    minFreeDiskRatio: config.minFreeDiskRatio,
    faults: new FaultInjector(config.faultInjection),
    onAccepted: (source) => metrics.scansAccepted.inc({ source }),
    credentials: { vault: transport.credentials, ttlMs: config.gitTokenTtlSeconds * 1000 },
    webhooks: {
      configured: config.webhookSecret !== null,
      policy: webhookPolicyFromConfig(config),
      deliveries: transport.deliveries,
    },
    reuse: new ResultReuse({
      cache: new CommitCache(store),
      settings: sourceSettingsFromConfig(config),
      encoding: config.tokenEncoding,
      keySettings: commitCacheSettings(config),
    }),
    onReused: () => metrics.scansReused.inc(),
  });
  // ROLE=all: the worker reports on the API's registry, so one /metrics covers the process.
  const worker =
    config.role === 'all' ? startScanWorker({ config, transport, store, log, registry: metrics.registry }) : null;
  const dashboard =
    config.enableQueueDashboard && config.redis
      ? queueDashboard({ redis: config.redis, prefix: config.queuePrefix, log: queueLog })
      : null;
  if (config.enableQueueDashboard && !dashboard)
    log.warn(
      'ENABLE_QUEUE_DASHBOARD is set but there is no Redis queue to show (embedded mode): set REDIS_URL (or REDIS_CLUSTER_NODES, REDIS_SENTINELS) for the dashboard',
    );
  const cors = corsPolicy(config.corsOrigins === '*' ? '*' : [...config.corsOrigins]);
  const liveness = livenessProbe(config.version, cors);
  const app = createApp({
    version: config.version,
    openApi,
    store,
    queue: transport.queue,
    redisQueue: config.redis ? transport.queue : null,
    scans,
    eventStreams,
    inspect,
    mcpCounting: mcpCounting.counting,
    metrics,
    queueDashboard: dashboard?.router ?? null,
    log,
    settings: sourceSettingsFromConfig(config),
    workers: new WorkerCoverage(transport.workers),
    limits: engineLimitsFromConfig(config),
    cors,
    liveness,
    trustProxy: Array.isArray(config.trustProxy)
      ? [...(config.trustProxy as string[])]
      : (config.trustProxy as boolean | number),
    maxJsonBodyBytes: config.maxJsonBodyBytes,
    maxUploadBytes: config.maxUploadBytes,
    scanWaitSeconds: config.scanWaitSeconds,
    rateLimitPerMinute: config.rateLimitPerMinute,
    inspectRateLimitPerMinute: config.inspectRateLimitPerMinute,
    counters: transport.counters,
    minFreeDiskRatio: config.minFreeDiskRatio,
    apiKeys,
    protectOpsRoutes: config.protectOpsRoutes,
  });

  // The liveness probe is answered before Express sees the request.
  handle = (req, res) => {
    if (!liveness(req, res)) app(req, res);
  };
  for (const [req, res] of early.splice(0)) handle(req, res);
  return {
    app,
    config,
    log,
    store,
    transport,
    worker,
    janitor,
    listen: () => Promise.resolve(server),
    async close() {
      const graceMs = config.shutdownGraceSeconds * 1000;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Open event streams and waiting submissions would hold the server until their scans end:
      // streams get a last event, waits answer 202, and what still runs after the grace is cut.
      eventStreams.endAll();
      scans.stopWaiting();
      const cut = setTimeout(() => server.closeAllConnections(), graceMs);
      await Promise.all([
        closed.finally(() => clearTimeout(cut)),
        worker ? closeWithinGrace(worker, graceMs, log) : undefined,
      ]);
      server.closeAllConnections();
      await janitor.stop();
      await inspect.close();
      await mcpCounting.close();
      await transport.close();
      await dashboard?.close();
    },
  };
}
