import { z } from 'zod';
import { ScanId } from '@reposcan/contracts';

// The job contract shared by the API (producer) and the worker: one queue, one job name, a
// versioned payload that carries only the scan id. The request itself lives on the volume,
// so Redis never holds user input and a payload can always be re-created from the id.
export const SCAN_QUEUE_NAME = 'scans';
export const SCAN_JOB_NAME = 'scan.run';

export const ScanJobPayload: z.ZodType<{ v: 1; scan_id: string }> = z.strictObject({
  v: z.literal(1),
  scan_id: ScanId,
});
export type ScanJobPayload = z.infer<typeof ScanJobPayload>;

export interface ScanJobContext {
  scanId: string;
  /**
   * 1-based: this run and every earlier one, whether it threw or killed its worker (a stall).
   * A job handed back by a shutting-down worker runs again under the same number.
   */
  attempt: number;
  /** Earlier runs that threw; the queue retries a retryable failure while this + 1 < maxAttempts. */
  failedAttempts: number;
  /** Runs that may throw before the job fails for good (worker crashes are limited apart, by maxStalledCount). */
  maxAttempts: number;
  /**
   * Aborts when the worker is force-closed (its reason is a `HandedBack`: the job waits in the
   * queue again) or the job is lost (removed, or its lock taken over by another worker).
   */
  signal: AbortSignal;
}

export type ScanProcessor = (ctx: ScanJobContext) => Promise<void>;

/** Base delay of the exponential retry backoff; attempt n waits about base·2^(n-1). */
export const DEFAULT_BACKOFF_MS = 5_000;
/** Share of each backoff delay that is randomised, so retries of many scans do not align. */
export const BACKOFF_JITTER = 0.5;

/** Finished jobs stay queryable (jobState) for a while, then go; the volume keeps the real record. */
export const KEEP_COMPLETED = { age: 24 * 3600, count: 1000 } as const;
export const KEEP_FAILED = { age: 7 * 24 * 3600 } as const;
