import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { ERROR_STATUS, readyResponse } from '@reposcan/contracts';
import type { ErrorCode, ReadinessChecks } from '@reposcan/contracts';
import type { ScanQueue } from '@reposcan/queue';
import { listenOn } from '@reposcan/runtime';

export interface WorkerHttp {
  port: number;
  close(): Promise<void>;
}

export interface WorkerHttpDeps {
  host: string;
  port: number;
  version: string;
  registry: Registry;
  queue: ScanQueue;
  /** True once SIGTERM arrived: the worker takes no new scans. */
  stopping: () => boolean;
  /** The volume's state; null before the scan store is open, or when it cannot be read. */
  diskStatus: () => Promise<ReadinessChecks['disk']>;
  minFreeDiskRatio: number;
}

/**
 * A worker's own small HTTP server (METRICS_PORT), the same probes the API answers: /health is
 * liveness (the event loop turns; a Redis outage is not a reason to restart a worker, it
 * recovers by itself), /ready says whether it can take work, /metrics is for Prometheus.
 */
export async function serveWorkerHttp(deps: WorkerHttpDeps): Promise<WorkerHttp> {
  const json = (res: ServerResponse, status: number, body: unknown): void => {
    res
      .writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' })
      .end(JSON.stringify(body));
  };
  // The API's error envelope, so one client parses both.
  const fail = (res: ServerResponse, code: ErrorCode, detail: string): void => {
    const { status, title } = ERROR_STATUS[code];
    json(res, status, {
      status: 'error',
      error: title,
      code,
      detail,
      request_id: randomUUID(),
      timestamp: new Date().toISOString(),
    });
  };
  const ONLY = 'This worker answers GET /health, /ready and /metrics only.';
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') return fail(res, 'METHOD_NOT_ALLOWED', ONLY);
    if (path === '/health') return json(res, 200, { status: 'ok', version: deps.version });
    if (path === '/ready') {
      void Promise.all([deps.queue.checkWrites(), deps.diskStatus().catch(() => null)]).then(([redisProblem, disk]) => {
        const ready = readyResponse({
          redisProblem,
          disk,
          minFreeDiskRatio: deps.minFreeDiskRatio,
          stopping: deps.stopping(),
        });
        json(res, ready.status === 'ready' ? 200 : 503, ready);
      });
      return;
    }
    if (path === '/metrics') {
      deps.registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': deps.registry.contentType }).end(text),
        () => fail(res, 'INTERNAL_ERROR', 'Metrics could not be collected; see the worker log.'),
      );
      return;
    }
    fail(res, 'ROUTE_NOT_FOUND', ONLY);
  });
  // Probes and scrapes are tiny: nothing should hold a socket open for long.
  server.headersTimeout = 10_000;
  server.requestTimeout = 10_000;
  await listenOn(server, deps.port, deps.host, 'METRICS_PORT');
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
