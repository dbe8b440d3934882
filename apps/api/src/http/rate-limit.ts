import type { Request, RequestHandler } from 'express';
import { ScanError } from '@reposcan/contracts';

/**
 * Who a request comes from, for rate limits, stream caps and fair shares of the workers: Express's
 * `req.ip`, which honours X-Forwarded-For only when TRUST_PROXY says a proxy sets it.
 */
export function clientOf(req: Request): string {
  return req.ip ?? 'unknown';
}

/**
 * Fixed one-minute window per client (`clientOf`). Each call makes a budget of its own: the API
 * keeps one for scans and uploads and a separate one for previews (inspect), so a page previewing
 * as you type never uses up the scans. `what` names the requests it counts, for the refusal.
 */
export function rateLimit(perMinute: number, what: string, now: () => number = Date.now): RequestHandler {
  const windows = new Map<string, { start: number; count: number }>();
  let lastSweep = now();
  return (req, _res, next) => {
    if (perMinute <= 0) return next();
    const t = now();
    if (t - lastSweep > 60_000) {
      for (const [key, w] of windows) if (t - w.start >= 60_000) windows.delete(key);
      lastSweep = t;
    }
    const key = clientOf(req);
    let w = windows.get(key);
    if (!w || t - w.start >= 60_000) {
      w = { start: t, count: 0 };
      windows.set(key, w);
    }
    w.count += 1;
    if (w.count > perMinute) {
      const retryAfterSeconds = Math.ceil((w.start + 60_000 - t) / 1000);
      return next(
        new ScanError(
          'RATE_LIMITED',
          `Too many ${what} from this client (limit ${perMinute} per minute). Retry after ${retryAfterSeconds} s.`,
          { retryAfterSeconds },
        ),
      );
    }
    next();
  };
}
