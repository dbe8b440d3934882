import { isScanError } from '@reposcan/contracts';
import { BACKOFF_JITTER } from './job-contract.js';

// What a stopped attempt means for its job, identical in both transports: a non-retryable
// ScanError ends the job at once, anything else is retried with backoff until `attempts` runs
// out, and an attempt stopped by a forced close goes back to the queue without using one up.

/** Checks the flag on the options too, so a ScanError that crossed a thread boundary still counts. */
export function isFinalError(error: unknown): boolean {
  if (!isScanError(error)) return false;
  const shape = error as { retryable?: unknown; options?: { retryable?: unknown } };
  return shape.retryable !== true && shape.options?.retryable !== true;
}

/** BullMQ's built-in exponential backoff with jitter, so the memory transport waits alike. */
export function backoffDelayMs(failedAttempts: number, baseMs: number): number {
  const max = Math.round(2 ** (failedAttempts - 1) * baseMs);
  return Math.floor(Math.random() * max * BACKOFF_JITTER + max * (1 - BACKOFF_JITTER));
}

/** How long a forced close lets aborted processors wind down and hand their jobs back. */
const FORCE_CLOSE_GRACE_MS = 3_000;

export async function withinForceCloseGrace(settled: Promise<unknown>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([settled, new Promise((resolve) => (timer = setTimeout(resolve, FORCE_CLOSE_GRACE_MS)))]);
  clearTimeout(timer);
}

export function shutdownAbortReason(): DOMException {
  return new DOMException('The worker is shutting down; the job goes back to the queue.', 'AbortError');
}

export function lockLostAbortReason(): DOMException {
  return new DOMException('The job was removed or taken over by another worker.', 'AbortError');
}
