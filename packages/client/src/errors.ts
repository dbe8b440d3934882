import type { ErrorCode } from './api-types.js';

/** A code the client uses when the server answered something that is not the API's envelope. */
export type ClientErrorCode = ErrorCode | 'UNEXPECTED_RESPONSE';

/**
 * The API answered with an error (any non-success status), carrying the envelope's fields.
 * A response that is not an error envelope (a proxy's HTML page, a wrong content type) is
 * reported with code `UNEXPECTED_RESPONSE` and the HTTP status it came with.
 */
export class ReposcanApiError extends Error {
  override readonly name = 'ReposcanApiError';
  readonly status: number;
  readonly code: ClientErrorCode;
  /** The API's sentence on what happened and what to do. */
  readonly detail: string;
  /** The short title (`error` in the envelope). */
  readonly title: string;
  readonly request_id: string | null;
  /** Present when the failure belongs to a scan that exists (`data.scan_id`). */
  readonly scan_id: string | null;
  /** Seconds from `Retry-After`, when the server sent one. */
  readonly retry_after: number | null;

  constructor(fields: {
    status: number;
    code: ClientErrorCode;
    detail: string;
    title: string;
    request_id: string | null;
    scan_id?: string | null;
    retry_after?: number | null;
  }) {
    super(`${fields.status} ${fields.code}: ${fields.detail}`);
    this.status = fields.status;
    this.code = fields.code;
    this.detail = fields.detail;
    this.title = fields.title;
    this.request_id = fields.request_id;
    this.scan_id = fields.scan_id ?? null;
    this.retry_after = fields.retry_after ?? null;
  }
}

/** No HTTP answer at all: refused connection, DNS failure, reset, TLS failure. */
export class ReposcanConnectionError extends Error {
  override readonly name = 'ReposcanConnectionError';
  readonly url: string;

  constructor(url: string, cause: unknown) {
    super(`cannot reach ${url}: ${describeCause(cause)}`, { cause });
    this.url = url;
  }
}

/** A downloaded artifact whose bytes do not match the size or SHA-256 the scan result lists. */
export class ReposcanIntegrityError extends Error {
  override readonly name = 'ReposcanIntegrityError';
}

function describeCause(cause: unknown): string {
  // undici wraps the socket error: "fetch failed" with cause { code: 'ECONNREFUSED', … }.
  const inner = cause instanceof Error && cause.cause instanceof Error ? cause.cause : cause;
  if (inner instanceof Error) {
    const code = (inner as Error & { code?: unknown }).code;
    return typeof code === 'string' && !inner.message.includes(code) ? `${code} ${inner.message}` : inner.message;
  }
  return String(inner);
}
