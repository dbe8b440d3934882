import type { Request, RequestHandler } from 'express';
import { ScanError } from '@reposcan/contracts';
import type { WindowCounters } from '@reposcan/queue';
import { callerOf } from './api-keys.js';
import type { Caller } from './api-keys.js';

/**
 * Who a request comes from, for rate limits, stream caps and fair shares of the workers: the name
 * of its API key when keys are on (so one user behind many addresses, or many behind one NAT, is
 * counted right), else Express's `req.ip`, which honours X-Forwarded-For only when TRUST_PROXY
 * says a proxy sets it. No address begins with `key:`, so a key and an address never share a count.
 */
export function clientOf(req: Request): string {
  const caller = callerOf(req);
  return caller ? `key:${caller.name}` : (req.ip ?? 'unknown');
}

const WINDOW_MS = 60_000;

/** A budget (`rateBudget`) in front of a route: the 429 goes to the error handler. */
export function asMiddleware(spend: (req: Request) => Promise<void>): RequestHandler {
  return (req, _res, next) => {
    spend(req).then(() => next(), next);
  };
}

/**
 * Fixed one-minute window per client (`clientOf`), counted by `counters`: in memory in the
 * embedded mode, in Redis otherwise, so that every API process of a deployment spends from one
 * budget. Each `scope` is a budget of its own: the API keeps one for scans and uploads and a
 * separate one for previews (inspect), so a page previewing as you type never uses up the scans.
 * `what` names the requests it counts, for the refusal.
 * Resolves when `req` may go on, rejects with the 429 when it may not: routes spend through
 * `asMiddleware`, the MCP tools call it themselves, so both spend from the same budgets.
 */
export function rateBudget(
  defaultPerMinute: number,
  what: string,
  scope: string,
  counters: WindowCounters,
  /** The key's own limit (rate=N, inspect=N in the key file), which replaces the default. */
  perKey: (caller: Caller) => number | null = () => null,
): (req: Request) => Promise<void> {
  return async (req) => {
    const caller = callerOf(req);
    const perMinute = (caller ? perKey(caller) : null) ?? defaultPerMinute;
    if (perMinute <= 0) return;
    let counted: { count: number; resetInMs: number };
    try {
      counted = await counters.add(`rate:${scope}`, clientOf(req), WINDOW_MS);
    } catch {
      // Redis cannot count: let the request through; a scan is then refused by the queue itself.
      return;
    }
    if (counted.count <= perMinute) return;
    const retryAfterSeconds = Math.max(1, Math.ceil(counted.resetInMs / 1000));
    throw new ScanError(
      'RATE_LIMITED',
      `Too many ${what} from ${caller ? `the key ${caller.name}` : 'this client'} (limit ${perMinute} per minute). Retry after ${retryAfterSeconds} s.`,
      { retryAfterSeconds },
    );
  };
}
