import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';

const SAFE_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** The caller's X-Request-Id when it is one safe token, else a new one. */
export function requestIdFor(incoming: string | string[] | undefined): string {
  return typeof incoming === 'string' && SAFE_ID.test(incoming) ? incoming : randomUUID();
}

/** Every response carries X-Request-Id (see requestIdFor). */
export const requestId: RequestHandler = (req, res, next) => {
  const id = requestIdFor(req.get('x-request-id'));
  res.locals.requestId = id;
  res.setHeader('X-Request-Id', id);
  next();
};
