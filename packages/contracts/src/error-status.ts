import type { ErrorCode } from './error-codes.js';

/** The one table from machine code to HTTP status and short title. */
export const ERROR_STATUS: Record<ErrorCode, { status: number; title: string }> = {
  INVALID_JSON: { status: 400, title: 'Malformed JSON' },
  INVALID_REQUEST: { status: 400, title: 'Invalid request' },
  INVALID_SCAN_ID: { status: 400, title: 'Invalid scan id' },
  INVALID_REPO_PATH: { status: 400, title: 'Invalid repository path' },
  INVALID_BRANCH: { status: 400, title: 'Invalid branch name' },
  LOCAL_PATHS_DISABLED: { status: 403, title: 'Local paths disabled' },
  OUTSIDE_ALLOWED_ROOTS: { status: 403, title: 'Path outside allowed roots' },
  SCHEME_NOT_ALLOWED: { status: 403, title: 'URL scheme not allowed' },
  HOST_NOT_ALLOWED: { status: 403, title: 'Host not allowed' },
  CREDENTIALS_IN_URL: { status: 403, title: 'Credentials in URL' },
  PRIVATE_ADDRESS: { status: 403, title: 'Private address' },
  ROUTE_NOT_FOUND: { status: 404, title: 'Not found' },
  SCAN_NOT_FOUND: { status: 404, title: 'Scan not found' },
  FORMAT_NOT_PRODUCED: { status: 404, title: 'Format not produced' },
  METHOD_NOT_ALLOWED: { status: 405, title: 'Method not allowed' },
  SCAN_NOT_READY: { status: 409, title: 'Scan not completed yet' },
  SCAN_FAILED: { status: 409, title: 'Scan failed' },
  SCAN_CANCELLED: { status: 409, title: 'Scan cancelled' },
  BODY_TOO_LARGE: { status: 413, title: 'Request body too large' },
  UPLOAD_TOO_LARGE: { status: 413, title: 'Upload too large' },
  ARCHIVE_TOO_LARGE: { status: 413, title: 'Archive too large' },
  TOO_MANY_ENTRIES: { status: 413, title: 'Too many archive entries' },
  REPO_TOO_LARGE: { status: 413, title: 'Repository too large' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, title: 'Unsupported media type' },
  NOT_A_ZIP: { status: 415, title: 'Not a ZIP archive' },
  LOCAL_PATH_NOT_FOUND: { status: 422, title: 'Local path not found' },
  REPO_NOT_FOUND: { status: 422, title: 'Repository not found' },
  BRANCH_NOT_FOUND: { status: 422, title: 'Branch not found' },
  SUBDIR_NOT_FOUND: { status: 422, title: 'Folder not found' },
  UNSAFE_ARCHIVE: { status: 422, title: 'Unsafe archive' },
  RATE_LIMITED: { status: 429, title: 'Too many requests' },
  INSPECT_BUSY: { status: 429, title: 'Inspect slots busy' },
  INTERNAL_ERROR: { status: 500, title: 'Internal error' },
  WORKER_CRASHED: { status: 500, title: 'Worker crashed' },
  CLONE_FAILED: { status: 502, title: 'Clone failed' },
  QUEUE_FULL: { status: 503, title: 'Queue full' },
  QUEUE_UNAVAILABLE: { status: 503, title: 'Queue unavailable' },
  CLONE_TIMEOUT: { status: 504, title: 'Clone timed out' },
  SCAN_TIMEOUT: { status: 504, title: 'Scan timed out' },
  DISK_FULL: { status: 507, title: 'Disk full' },
};

export function statusOf(code: ErrorCode): number {
  return ERROR_STATUS[code].status;
}
