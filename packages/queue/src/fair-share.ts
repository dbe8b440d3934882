// Fair shares of the workers between clients. A scan is queued behind every scan of clients that
// submitted fewer in the last FAIR_SHARE_WINDOW_MS: one client's burst (or its scans that hang on
// a slow remote) cannot keep another client's scan waiting behind all of it. Scans of one client,
// and scans of clients with equal counts, keep their order of arrival.
import { createHash } from 'node:crypto';

/** How long a submission counts against its client's next ones. */
export const FAIR_SHARE_WINDOW_MS = 10 * 60_000;

/** BullMQ's lowest priority (largest number). */
const LOWEST_PRIORITY = 2 ** 21 - 1;

/** The queue priority (1 = first) of a client's scan, from its submissions in the window, this one included. */
export function fairPriority(recentSubmissions: number): number {
  return Math.min(Math.max(1, Math.floor(recentSubmissions)), LOWEST_PRIORITY);
}

/** What a client is stored under: never the client's own text (an address, later a key name). */
export function clientTag(client: string): string {
  return createHash('sha256').update(client).digest('base64url').slice(0, 22);
}

/** Submission counts per client in one process (the embedded queue). */
export class LocalSubmissionCounts {
  readonly #windows = new Map<string, { until: number; count: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Counts one more submission of `client` and returns its count in the current window. */
  add(client: string): number {
    const t = this.now();
    if (this.#windows.size > 10_000) for (const [key, w] of this.#windows) if (w.until <= t) this.#windows.delete(key);
    const tag = clientTag(client);
    let window = this.#windows.get(tag);
    if (!window || window.until <= t) {
      window = { until: t + FAIR_SHARE_WINDOW_MS, count: 0 };
      this.#windows.set(tag, window);
    }
    window.count += 1;
    return window.count;
  }
}
