import type { RequestHandler } from 'express';
import { sendError } from '../http/envelope.js';

/** 405 with Allow for a known path asked with the wrong method. */
export function methodNotAllowed(allowed: string[]): RequestHandler {
  return (req, res) => {
    res.setHeader('Allow', allowed.join(', '));
    sendError(res, 'METHOD_NOT_ALLOWED', `${req.method} is not supported here; use ${allowed.join(' or ')}.`);
  };
}
