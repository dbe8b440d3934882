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

/**
 * Fixed one-minute window per client (`clientOf`), counted by `counters`: in memory in the
 * embedded mode, in Redis otherwise, so that every API process of a deployment spends from one
 * budget. Each `scope` is a budget of its own: the API keeps one for scans and uploads and a
 * separate one for previews (inspect), so a page previewing as you type never uses up the scans.
 * `what` names the requests it counts, for the refusal.
 */
export function rateLimit(
  defaultPerMinute: number,
  what: string,
  scope: string,
  counters: WindowCounters,
  /** The key's own limit (rate=N, inspect=N in the key file), which replaces the default. */
  perKey: (caller: Caller) => number | null = () => null,
): RequestHandler {
  return (req, _res, next) => {
    const caller = callerOf(req);
    const perMinute = (caller ? perKey(caller) : null) ?? defaultPerMinute;
    if (perMinute <= 0) return next();
    counters.add(`rate:${scope}`, clientOf(req), WINDOW_MS).then(
      ({ count, resetInMs }) => {
        if (count <= perMinute) return next();
        const retryAfterSeconds = Math.max(1, Math.ceil(resetInMs / 1000));
        next(
          new ScanError(
            'RATE_LIMITED',
            `Too many ${what} from ${caller ? `the key ${caller.name}` : 'this client'} (limit ${perMinute} per minute). Retry after ${retryAfterSeconds} s.`,
            { retryAfterSeconds },
          ),
        );
      },
      // Redis cannot count: let the request through; a scan is then refused by the queue itself.
      () => next(),
    );
  };
}
