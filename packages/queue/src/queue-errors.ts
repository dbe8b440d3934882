import { ScanError } from '@reposcan/contracts';

const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;
const FULL_RETRY_AFTER_SECONDS = 30;

/** Redis is down or too slow: the API answers 503 at once instead of holding the request open. */
export function queueUnavailable(cause?: unknown): ScanError {
  return new ScanError('QUEUE_UNAVAILABLE', 'The job queue is unavailable right now. Try again in a few seconds.', {
    retryable: true,
    retryAfterSeconds: UNAVAILABLE_RETRY_AFTER_SECONDS,
    cause,
  });
}

export function queueFull(maxWaiting: number): ScanError {
  return new ScanError('QUEUE_FULL', `${maxWaiting} scans are already waiting. Try again later.`, {
    retryable: true,
    retryAfterSeconds: FULL_RETRY_AFTER_SECONDS,
  });
}

export function invalidScanId(scanId: string): ScanError {
  return new ScanError('INVALID_SCAN_ID', `Not a scan id: ${JSON.stringify(scanId.slice(0, 64))}.`);
}
