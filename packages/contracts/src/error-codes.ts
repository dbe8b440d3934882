// Machine codes first: every refusal and every failed scan carries one of these. The HTTP
// status of each lives in one table beside them (error-status.ts).
export const ERROR_CODES = [
  // 400
  'INVALID_JSON',
  'INVALID_REQUEST',
  'INVALID_SCAN_ID',
  'INVALID_REPO_PATH',
  'INVALID_BRANCH',
  'INVALID_MULTIPART',
  'GIT_TOKEN_NOT_ACCEPTED',
  'INVALID_CALLBACK_URL',
  // 401 / 403: API keys (API_KEYS_FILE, API_KEYS)
  'API_KEY_MISSING',
  'API_KEY_INVALID',
  'ADMIN_KEY_REQUIRED',
  // 403
  'LOCAL_PATHS_DISABLED',
  'OUTSIDE_ALLOWED_ROOTS',
  'SCHEME_NOT_ALLOWED',
  'HOST_NOT_ALLOWED',
  'CREDENTIALS_IN_URL',
  'PRIVATE_ADDRESS',
  'CLONE_REDIRECT_BLOCKED',
  // 404
  'ROUTE_NOT_FOUND',
  'SCAN_NOT_FOUND',
  'FORMAT_NOT_PRODUCED',
  'PART_NOT_FOUND',
  // 405
  'METHOD_NOT_ALLOWED',
  'PRECONDITION_FAILED',
  'RANGE_NOT_SATISFIABLE',
  // 409
  'SCAN_NOT_READY',
  'SCAN_FAILED',
  'SCAN_CANCELLED',
  'PART_REQUIRED',
  // 413
  'BODY_TOO_LARGE',
  'UPLOAD_TOO_LARGE',
  'ARCHIVE_TOO_LARGE',
  'TOO_MANY_ENTRIES',
  'REPO_TOO_LARGE',
  // 415
  'UNSUPPORTED_MEDIA_TYPE',
  'NOT_A_ZIP',
  // 422
  'LOCAL_PATH_NOT_FOUND',
  'REPO_NOT_FOUND',
  'BRANCH_NOT_FOUND',
  'SUBDIR_NOT_FOUND',
  'UNSAFE_ARCHIVE',
  'IGNORE_FILE_TOO_LARGE',
  'REPO_AUTH_FAILED',
  'WEBHOOKS_NOT_CONFIGURED',
  'PART_BUDGET_TOO_SMALL',
  'BASE_REF_NOT_FOUND',
  'BASE_REF_NOT_SUPPORTED',
  // 429
  'RATE_LIMITED',
  'INSPECT_BUSY',
  'TOO_MANY_EVENT_STREAMS',
  // 500 / 502 / 503 / 504 / 507
  'INTERNAL_ERROR',
  'WORKER_CRASHED',
  'QUEUE_LOST',
  'CLONE_FAILED',
  'QUEUE_FULL',
  'QUEUE_UNAVAILABLE',
  'NO_WORKER_ACCEPTS',
  'CREDENTIALS_KEY_MISSING',
  'EVENT_STREAMS_FULL',
  'SERVER_STOPPING',
  'CLONE_TIMEOUT',
  'SCAN_TIMEOUT',
  'WALK_TIMEOUT',
  'DISK_FULL',
  'VOLUME_READ_ONLY',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/**
 * A failure with a machine code and a sentence that tells the user what to do. Thrown by
 * packages and the worker; the API turns it into the error envelope. `retryable` marks
 * transient failures (network, Redis) that a job may retry with backoff.
 */
export class ScanError extends Error {
  override readonly name = 'ScanError';
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly options: { retryable?: boolean; cause?: unknown; retryAfterSeconds?: number } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
  }

  get retryable(): boolean {
    return this.options.retryable ?? false;
  }
}

/** Recognises a ScanError by shape, so one that crossed a thread or process boundary still counts. */
export function isScanError(error: unknown): error is ScanError {
  return (
    error instanceof ScanError ||
    (typeof error === 'object' &&
      error !== null &&
      (error as { name?: unknown }).name === 'ScanError' &&
      ERROR_CODES.includes((error as { code?: unknown }).code as ErrorCode))
  );
}
