import type { ErrorRequestHandler, RequestHandler } from 'express';
import { isScanError } from '@reposcan/contracts';
import type { Logger } from '@reposcan/runtime';
import { ClientGoneError } from './client-gone.js';
import { sendError } from './envelope.js';

const MULTER_MESSAGES: Record<string, string> = {
  LIMIT_FILE_COUNT: 'Send exactly one file, in the form field `file`.',
  LIMIT_UNEXPECTED_FILE: 'Send the archive in the form field named `file`, and only one file.',
  LIMIT_PART_COUNT: 'The form has too many parts: send only the `file` field.',
  LIMIT_FIELD_COUNT: 'The form has too many fields: options go in the query string.',
  LIMIT_FIELD_KEY: 'A form field name is too long.',
  LIMIT_FIELD_VALUE: 'A form field value is too long: options go in the query string.',
  MISSING_FIELD_NAME: 'A form field has no name.',
};

/** 404 for anything no route matched, in the same envelope as every other error. */
export const notFound: RequestHandler = (req, res) => {
  sendError(res, 'ROUTE_NOT_FOUND', `No route for ${req.method} ${req.path}. See /docs for the API.`);
};

/** Turns every thrown error into the error envelope; unknown errors are logged and answered as a generic 500. */
export function errorHandler(log: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    if (err instanceof ClientGoneError) {
      log.info({ requestId: String(res.locals.requestId ?? ''), method: req.method, path: req.path }, err.message);
      return;
    }
    if (res.headersSent) {
      req.socket.destroy();
      return;
    }
    // An internal error's message is a diagnostic (paths, parser output): it goes to the log only.
    if (isScanError(err) && err.code !== 'INTERNAL_ERROR') {
      const retryAfter = err.options.retryAfterSeconds;
      sendError(res, err.code, err.message, retryAfter === undefined ? {} : { retryAfterSeconds: retryAfter });
      return;
    }
    const e = err as { type?: string; code?: string; status?: number; name?: string };
    if (e.type === 'entity.parse.failed')
      return sendError(
        res,
        'INVALID_JSON',
        'The body is not valid JSON. Send a JSON object with Content-Type: application/json.',
      );
    if (e.type === 'entity.too.large')
      return sendError(
        res,
        'BODY_TOO_LARGE',
        'The JSON body is larger than the server accepts (MAX_JSON_BODY_BYTES). Send fewer or shorter patterns.',
      );
    if (e.type === 'charset.unsupported' || e.type === 'encoding.unsupported')
      return sendError(res, 'UNSUPPORTED_MEDIA_TYPE', 'Send the body as UTF-8 JSON.');
    if (e.name === 'MulterError') {
      if (e.code === 'LIMIT_FILE_SIZE')
        return sendError(
          res,
          'UPLOAD_TOO_LARGE',
          'The archive is larger than the server accepts (MAX_UPLOAD_BYTES). Upload a smaller ZIP, or exclude build output and dependencies before zipping.',
        );
      return sendError(
        res,
        'INVALID_REQUEST',
        MULTER_MESSAGES[e.code ?? ''] ?? 'The multipart form is malformed: send one file in the field `file`.',
      );
    }
    if (typeof e.status === 'number' && e.status >= 400 && e.status < 500) {
      return sendError(res, 'INVALID_REQUEST', 'The request could not be read. Check its headers and body.');
    }
    const requestId = String(res.locals.requestId ?? '');
    log.error({ err, requestId, method: req.method, path: req.path }, 'unhandled error');
    sendError(
      res,
      'INTERNAL_ERROR',
      `Something went wrong on our side; it has been logged as request ${requestId}. Retry, and report that id if it keeps happening.`,
    );
  };
}
