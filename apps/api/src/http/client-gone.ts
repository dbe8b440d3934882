import type { Response } from 'express';

/**
 * The client closed its connection before its answer was ready: a live preview that typed on, a
 * page closed mid-request. Nothing can be answered and nothing failed on our side, so the error
 * handler logs it as the request's one line, at info, never as an error.
 */
export class ClientGoneError extends Error {
  override readonly name = 'ClientGoneError';
}

/** Aborts, with a ClientGoneError as its reason, when the client closes `res` before it was sent. */
export function whenClientGoes(res: Response, what: string): AbortSignal {
  const gone = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) gone.abort(new ClientGoneError(`${what} abandoned: the client went away`));
  });
  return gone.signal;
}
