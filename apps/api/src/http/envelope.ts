import type { Response } from 'express';
import { ERROR_STATUS } from '@reposcan/contracts';
import type { ErrorCode, ErrorEnvelope } from '@reposcan/contracts';

export function sendSuccess(res: Response, status: number, message: string, data: unknown): void {
  sendSuccessJson(res, status, message, JSON.stringify(data));
}

/** The success envelope around `data` that is JSON text already (a cached response body). */
export function sendSuccessJson(res: Response, status: number, message: string, dataJson: string): void {
  res.status(status).type('application/json; charset=utf-8');
  res.send(
    `{"status":"success","message":${JSON.stringify(message)},"data":${dataJson},"timestamp":"${new Date().toISOString()}"}`,
  );
}

export function errorEnvelope(code: ErrorCode, detail: string, requestId: string, scanId?: string): ErrorEnvelope {
  return {
    status: 'error',
    error: ERROR_STATUS[code].title,
    code,
    detail,
    request_id: requestId,
    timestamp: new Date().toISOString(),
    ...(scanId ? { data: { scan_id: scanId } } : {}),
  };
}

export function sendError(
  res: Response,
  code: ErrorCode,
  detail: string,
  options: { scanId?: string; retryAfterSeconds?: number } = {},
): void {
  // An error is never a download, even when a download route had set its headers already.
  res.removeHeader('Content-Disposition');
  res.removeHeader('ETag');
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  if (options.retryAfterSeconds !== undefined)
    res.setHeader('Retry-After', String(Math.max(1, Math.ceil(options.retryAfterSeconds))));
  res
    .status(ERROR_STATUS[code].status)
    .json(errorEnvelope(code, detail, String(res.locals.requestId ?? ''), options.scanId));
}
