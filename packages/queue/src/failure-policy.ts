import { isScanError } from '@reposcan/contracts';
import { BACKOFF_JITTER } from './job-contract.js';

// What a stopped attempt means for its job, identical in both transports: a retryable ScanError
// or a transient error is retried with backoff until `attempts` runs out, anything else ends the
// job at once, and an attempt stopped by a forced close goes back to the queue without using one up.

/** System error codes that mean "not now" rather than "never": the network, a system short of processes or descriptors. */
const TRANSIENT_ERRNO: ReadonlySet<string> = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'ENETRESET',
  'EAI_AGAIN',
  'EAGAIN',
  'EBUSY',
  'EMFILE',
  'ENFILE',
]);

/** Redis replies that a moment later would not give: loading, busy, failing over, out of memory. */
const TRANSIENT_REDIS_REPLY = /^(LOADING|BUSY|TRYAGAIN|CLUSTERDOWN|MASTERDOWN|READONLY|NOREPLICAS|OOM)\b/;

/**
 * Failures another attempt may well not meet: the network, Redis, a busy system. Everything else
 * that is not a ScanError is a bug (a TypeError, a stack overflow), which fails the same way on
 * every attempt: retrying it only makes the user wait three times as long for the same 500.
 * Causes are followed, so a wrapped ECONNRESET still counts.
 */
export function isTransientError(error: unknown): boolean {
  for (
    let e: unknown = error, depth = 0;
    e !== null && typeof e === 'object' && depth < 5;
    e = (e as { cause?: unknown }).cause, depth++
  ) {
    const { code, name, message, command } = e as {
      code?: unknown;
      name?: unknown;
      message?: unknown;
      command?: unknown;
    };
    if (typeof code === 'string' && TRANSIENT_ERRNO.has(code)) return true;
    // ioredis: retries used up while disconnected, every cluster node failed, a command cut off by a closed connection.
    if (name === 'MaxRetriesPerRequestError' || name === 'ClusterAllFailedError') return true;
    if (name === 'AbortError' && typeof command === 'object' && command !== null) return true;
    if (message === 'Connection is closed.') return true;
    if (name === 'ReplyError' && typeof message === 'string' && TRANSIENT_REDIS_REPLY.test(message)) return true;
  }
  return false;
}

/** Checks the flag on the options too, so a ScanError that crossed a thread boundary still counts. */
export function isFinalError(error: unknown): boolean {
  if (!isScanError(error)) return !isTransientError(error);
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

/** Why a job's signal aborts when its worker hands it back to the queue (shutdown): nobody else runs it yet. */
export class HandedBack extends DOMException {
  constructor() {
    super('The worker is shutting down; the job goes back to the queue.', 'AbortError');
  }
}

export function shutdownAbortReason(): DOMException {
  return new HandedBack();
}

export function lockLostAbortReason(): DOMException {
  return new DOMException('The job was removed or taken over by another worker.', 'AbortError');
}
