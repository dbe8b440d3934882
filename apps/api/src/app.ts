import express from 'express';
import type { Express, RequestHandler, Router } from 'express';
import type { EngineLimits } from '@reposcan/core';
import type { ScanQueue, WindowCounters } from '@reposcan/queue';
import type { ScanStore } from '@reposcan/storage';
import type { Logger } from '@reposcan/runtime';
import type { SourceSettings } from '@reposcan/sources';
import { requireApiKey } from './http/api-keys.js';
import type { ApiKeyRing } from './http/api-keys.js';
import { errorHandler, notFound } from './http/error-handler.js';
import type { CorsPolicy } from './http/cors-policy.js';
import type { EventStreams } from './http/event-streams.js';
import type { LivenessProbe } from './http/liveness-probe.js';
import type { ApiMetrics } from './http/metrics.js';
import { QUEUE_DASHBOARD_PATH } from './http/queue-dashboard.js';
import { asMiddleware, rateBudget } from './http/rate-limit.js';
import { requestId } from './http/request-id.js';
import { webPage } from './http/web-page.js';
import { artifactRoutes } from './routes/artifacts.routes.js';
import { inspectRoutes } from './routes/inspect.routes.js';
import { mcpBodyErrors, mcpRoutes } from './routes/mcp.routes.js';
import type { TokenCounting } from '@reposcan/mcp';
import { scanRoutes } from './routes/scan.routes.js';
import { scansRoutes } from './routes/scans.routes.js';
import { systemRoutes } from './routes/system.routes.js';
import { uploadRoutes } from './routes/upload.routes.js';
import { ArtifactService } from './services/artifact-service.js';
import type { InspectService } from './services/inspect-service.js';
import type { ScanService } from './services/scan-service.js';
import type { WorkerCoverage } from './services/worker-coverage.js';

export interface AppDeps {
  version: string;
  openApi: Record<string, unknown>;
  store: ScanStore;
  queue: ScanQueue;
  /** The queue only when Redis backs it (for /ready); null in the embedded mode. */
  redisQueue: ScanQueue | null;
  scans: ScanService;
  /** The open event streams of this process and their caps. */
  eventStreams: EventStreams;
  inspect: InspectService;
  /** Where the MCP tools count pages: the runtime's token thread. */
  mcpCounting: TokenCounting;
  metrics: ApiMetrics;
  /** ENABLE_QUEUE_DASHBOARD with Redis: bull-board, mounted at /admin/queues. */
  queueDashboard?: Router | null;
  log: Logger;
  settings: SourceSettings;
  /** The live workers' source policies: a source none of them accepts is refused at submit. */
  workers: WorkerCoverage;
  limits: EngineLimits;
  cors: CorsPolicy;
  /** GET /health; the HTTP server also calls it ahead of Express (see livenessProbe). */
  liveness: LivenessProbe;
  trustProxy: boolean | number | string | string[] | undefined;
  maxJsonBodyBytes: number;
  maxUploadBytes: number;
  scanWaitSeconds: number;
  rateLimitPerMinute: number;
  inspectRateLimitPerMinute: number;
  /** Where the rate limits count: this process's memory, or Redis shared by every API process. */
  counters: WindowCounters;
  minFreeDiskRatio: number;
  /** API_KEYS_FILE / API_KEYS; null (or absent): no keys, every route open as before. */
  apiKeys?: ApiKeyRing | null;
  /** PROTECT_OPS_ROUTES: with keys on, /metrics and the queue dashboard need an admin key. */
  protectOpsRoutes?: boolean;
}

/** The Express application: middleware, routes and the error envelope. No listen(). */
export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  // JSON answers need no weak ETag (hashing every body costs a flood of requests CPU); downloads
  // set their own, the artifact's sha256.
  app.set('etag', false);
  if (deps.trustProxy !== undefined) app.set('trust proxy', deps.trustProxy);
  // Liveness first, ahead of metrics, body parsing and request logging.
  app.use((req, res, next) => {
    if (!deps.liveness(req, res)) next();
  });
  app.use(requestId);
  app.use(deps.cors);
  app.use(deps.metrics.observe);
  // Any JSON value parses, so one that is not an object is told so (requireJson), not called malformed.
  app.use(express.json({ limit: deps.maxJsonBodyBytes, strict: false, type: 'application/json' }));
  app.use((req, res, next) => {
    const started = Date.now();
    res.on('finish', () => {
      // Probes and scrapes arrive every few seconds from each orchestrator and Prometheus: a healthy
      // answer is logged at debug, so it neither floods the log nor costs a busy API its latency.
      const level = res.statusCode < 400 && PROBE_PATHS.has(req.path) ? 'debug' : 'info';
      if (!deps.log.isLevelEnabled(level)) return;
      deps.log[level](
        {
          requestId: String(res.locals.requestId),
          method: req.method,
          path: req.path,
          status: res.statusCode,
          ms: Date.now() - started,
        },
        'request',
      );
    });
    next();
  });

  // With keys on, /v1 and /mcp need one; /health, /ready, /docs and the page's files hold no data and stay open.
  if (deps.apiKeys) {
    app.use(['/v1', '/mcp'], requireApiKey(deps.apiKeys, { admin: false }));
    if (deps.protectOpsRoutes)
      app.use(['/metrics', QUEUE_DASHBOARD_PATH], requireApiKey(deps.apiKeys, { admin: true }));
  }
  const spendScan = rateBudget(
    deps.rateLimitPerMinute,
    'scan or upload requests',
    'scans',
    deps.counters,
    (caller) => caller.rate,
  );
  // Previews are cheap, bounded by INSPECT_CONCURRENCY and sent as the page's form changes: their own budget.
  const spendInspect = rateBudget(
    deps.inspectRateLimitPerMinute,
    'previews (inspect requests)',
    'inspect',
    deps.counters,
    (caller) => caller.inspect,
  );
  const limiter: RequestHandler = asMiddleware(spendScan);
  const inspectLimiter: RequestHandler = asMiddleware(spendInspect);
  const waitMs = deps.scanWaitSeconds * 1000;
  const artifacts = new ArtifactService(deps.store, deps.scans);
  app.use(
    systemRoutes({
      version: deps.version,
      openApi: deps.openApi,
      store: deps.store,
      queue: deps.redisQueue,
      minFreeDiskRatio: deps.minFreeDiskRatio,
      metrics: deps.metrics,
    }),
  );
  app.use(scanRoutes({ scans: deps.scans, settings: deps.settings, workers: deps.workers, waitMs, limiter }));
  app.use(
    uploadRoutes({
      scans: deps.scans,
      store: deps.store,
      maxUploadBytes: deps.maxUploadBytes,
      archiveLimits: deps.settings.archive,
      waitMs,
      limiter,
    }),
  );
  app.use(
    inspectRoutes({ inspect: deps.inspect, settings: deps.settings, limits: deps.limits, limiter: inspectLimiter }),
  );
  app.use(scansRoutes({ scans: deps.scans, streams: deps.eventStreams }));
  app.use(artifactRoutes({ artifacts, scans: deps.scans }));
  app.use(
    mcpRoutes({
      version: deps.version,
      scans: deps.scans,
      artifacts,
      inspect: deps.inspect,
      settings: deps.settings,
      workers: deps.workers,
      limits: deps.limits,
      spendScan,
      spendInspect,
      log: deps.log,
      counting: deps.mcpCounting,
    }),
  );
  // A body /mcp cannot parse is a JSON-RPC error, as the SDK gives, not the REST envelope.
  app.use('/mcp', mcpBodyErrors);
  if (deps.queueDashboard) app.use(QUEUE_DASHBOARD_PATH, deps.queueDashboard);
  app.use(webPage());
  app.use(notFound);
  app.use(errorHandler(deps.log));
  return app;
}

// /health is answered before the request log (livenessProbe) and never logged.
const PROBE_PATHS: ReadonlySet<string> = new Set(['/ready', '/metrics']);
