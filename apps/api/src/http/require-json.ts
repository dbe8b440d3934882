import type { RequestHandler } from 'express';
import { ScanError } from '@reposcan/contracts';

/** 415 unless the body is declared as JSON (express.json() silently skips other types). */
export const requireJson: RequestHandler = (req, _res, next) => {
  if (!req.is('application/json')) {
    return next(new ScanError('UNSUPPORTED_MEDIA_TYPE', 'Send the body as JSON with Content-Type: application/json.'));
  }
  if (req.body === undefined || req.body === null || typeof req.body !== 'object' || Array.isArray(req.body)) {
    return next(new ScanError('INVALID_REQUEST', 'The body must be a JSON object.'));
  }
  next();
};
