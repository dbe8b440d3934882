import type { Request, RequestHandler } from 'express';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { ScanQueue } from '@reposcan/queue';

export interface ApiMetrics {
  registry: Registry;
  observe: RequestHandler;
  scansAccepted: Counter;
  /** Scans completed at submit from an earlier scan's result (the commit cache). */
  scansReused: Counter;
  stateReads: Counter;
}

/** What the event stream gauges read at scrape time. */
export interface StreamGauges {
  eventStreamsOpen: () => number;
  stateWatchers: () => number;
}

/** Prometheus metrics of this API process; the queue's counts are read at scrape time (-1: Redis unreachable). */
export function createMetrics(
  queue: Pick<ScanQueue, 'waitingCount' | 'activeCount'>,
  inspectInFlight: () => number,
  streams: StreamGauges,
  /** The API's paths as its OpenAPI document writes them (`/v1/scans/{scan_id}`). */
  apiPaths: readonly string[] = [],
): ApiMetrics {
  const routeOf = routeLabeller(apiPaths);
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'reposcan_' });
  const duration = new Histogram({
    name: 'reposcan_http_request_duration_seconds',
    help: 'HTTP request latency by route',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });
  const scansAccepted = new Counter({
    name: 'reposcan_scans_accepted_total',
    help: 'Scans accepted by this API process',
    labelNames: ['source'],
    registers: [registry],
  });
  const scansReused = new Counter({
    name: 'reposcan_scans_reused_total',
    help: 'Scans this API process completed at submit from an earlier scan of the same commit and options (commit cache)',
    registers: [registry],
  });
  new Gauge({
    name: 'reposcan_queue_waiting',
    help: 'Scans waiting in the queue, retries included',
    registers: [registry],
    async collect() {
      this.set(await queue.waitingCount().catch(() => -1));
    },
  });
  new Gauge({
    name: 'reposcan_queue_active',
    help: 'Scans running on any worker of the queue',
    registers: [registry],
    async collect() {
      this.set(await queue.activeCount().catch(() => -1));
    },
  });
  new Gauge({
    name: 'reposcan_inspect_in_flight',
    help: 'Inspect previews running in this API process',
    registers: [registry],
    collect() {
      this.set(inspectInFlight());
    },
  });
  new Gauge({
    name: 'reposcan_event_streams_open',
    help: 'Event streams (GET /v1/scans/{id}/events) open on this API process',
    registers: [registry],
    collect() {
      this.set(streams.eventStreamsOpen());
    },
  });
  new Gauge({
    name: 'reposcan_state_watchers',
    help: 'Scans this API process watches for event streams and waiting requests: one each, however many wait on it',
    registers: [registry],
    collect() {
      this.set(streams.stateWatchers());
    },
  });
  const stateReads = new Counter({
    name: 'reposcan_state_reads_total',
    help: "Reads of a watched scan's state.json: one per state signal or fallback tick per scan, shared by all its waiters",
    registers: [registry],
  });
  const observe: RequestHandler = (req, res, next) => {
    const end = duration.startTimer();
    res.on('finish', () => {
      end({ method: req.method, route: routeOf(req), status: String(res.statusCode) });
    });
    next();
  };
  return { registry, observe, scansAccepted, scansReused, stateReads };
}

/**
 * A request's route pattern for the latency metric: the one Express matched, under the prefix
 * its router is mounted at; else, for a request refused before routing (a missing key's 401),
 * the API path it names; else `unmatched`.
 */
function routeLabeller(apiPaths: readonly string[]): (req: Request) => string {
  const known = apiPaths.map((path) => ({
    label: path.replace(/\{(\w+)\}/g, ':$1'),
    pattern: new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{\w+\}/g, '[^/]+')}$`),
  }));
  return (req) => {
    const matched = (req.route as { path?: unknown } | undefined)?.path;
    if (typeof matched === 'string') return `${req.baseUrl}${matched}`;
    const path = req.originalUrl.split('?')[0] ?? '';
    return known.find((k) => k.pattern.test(path))?.label ?? 'unmatched';
  };
}
