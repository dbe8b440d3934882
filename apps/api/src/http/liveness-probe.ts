import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CorsPolicy } from './cors-policy.js';
import { requestIdFor } from './request-id.js';

/** Answers the request and returns true when it is the liveness probe; returns false for anything else. */
export type LivenessProbe = (req: IncomingMessage, res: ServerResponse) => boolean;

/**
 * GET (and HEAD) /health, answered on the bare Node request: the HTTP server calls it before
 * Express, whose per-request setup, router walk and send() cost about five times the answer
 * itself. An orchestrator polls it constantly, and on a host busy with scans its latency is what
 * decides whether the API is restarted. Same headers as any other answer (X-Request-Id, CORS),
 * the same paths Express would match (trailing slash, any case, a query), never logged or counted.
 * Node itself leaves the body out of an answer to HEAD.
 */
export function livenessProbe(version: string, cors: CorsPolicy): LivenessProbe {
  const body = Buffer.from(JSON.stringify({ status: 'ok', version }));
  const headers = { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': String(body.length) };
  return (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    const url = req.url ?? '';
    const query = url.indexOf('?');
    const path = (query === -1 ? url : url.slice(0, query)).toLowerCase();
    if (path !== '/health' && path !== '/health/') return false;
    res.setHeader('X-Request-Id', requestIdFor(req.headers['x-request-id']));
    cors(req, res, () => {
      res.writeHead(200, headers);
      res.end(body);
    });
    return true;
  };
}
