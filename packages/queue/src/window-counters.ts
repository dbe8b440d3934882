import { clientTag } from './fair-share.js';
import type { RedisClient } from './redis-connections.js';

/** One more event counted: how many its window holds now (this one included), and when the window ends. */
export interface WindowCount {
  count: number;
  resetInMs: number;
}

/**
 * Events per client over fixed windows, for rate limits and fair shares: a client's window starts
 * at its first event and lasts `windowMs`. `scope` keeps budgets apart (scans, previews, fair
 * shares). In memory they count one process's events; on Redis, every process of the deployment's.
 */
export interface WindowCounters {
  add(scope: string, client: string, windowMs: number): Promise<WindowCount>;
}

/** In one process (the embedded mode). */
export class LocalWindowCounters implements WindowCounters {
  readonly #windows = new Map<string, { until: number; count: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  /** `add`, answered at once. */
  addNow(scope: string, client: string, windowMs: number): WindowCount {
    const t = this.now();
    if (this.#windows.size > 10_000) for (const [key, w] of this.#windows) if (w.until <= t) this.#windows.delete(key);
    const key = `${scope}:${clientTag(client)}`;
    let window = this.#windows.get(key);
    if (!window || window.until <= t) {
      window = { until: t + windowMs, count: 0 };
      this.#windows.set(key, window);
    }
    window.count += 1;
    return { count: window.count, resetInMs: window.until - t };
  }

  add(scope: string, client: string, windowMs: number): Promise<WindowCount> {
    return Promise.resolve(this.addNow(scope, client, windowMs));
  }
}

/**
 * On Redis: a key per scope and client (`<keyPrefix>:<scope>:<client tag>`) that expires with
 * its window, counted with INCR, so every API process adds to the same count. Under a hash-tagged
 * prefix every key sits in the queue's cluster slot.
 */
export function redisWindowCounters(connection: RedisClient, keyPrefix: string): WindowCounters {
  return {
    async add(scope, client, windowMs) {
      const key = `${keyPrefix}:${scope}:${clientTag(client)}`;
      const replies = await connection.multi().set(key, '0', 'PX', windowMs, 'NX').incr(key).pttl(key).exec();
      const [, counted, ttl] = replies ?? [];
      if (!counted || counted[0] || !ttl || ttl[0])
        throw counted?.[0] ?? ttl?.[0] ?? new Error('Redis refused a count');
      return { count: Number(counted[1]), resetInMs: Math.max(0, Number(ttl[1])) };
    },
  };
}
