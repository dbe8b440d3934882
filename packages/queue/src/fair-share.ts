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
