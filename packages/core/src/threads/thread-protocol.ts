// The messages between a WorkerThread (worker-thread.ts) and the thread it runs (serve-thread.ts).
// Imports nothing, so the leanest thread entry pays nothing for it.

/** An Error as it crosses a thread: error-codec.ts turns it back into the repo's own class. */
export interface EncodedError {
  name: string;
  message: string;
  code?: string;
  stack?: string;
  /** ScanError's options that survive a crossing. */
  retryable?: boolean;
  retryAfterSeconds?: number;
}

/** To a thread: a request to answer, or the cancel of one it may still be running. */
export type ThreadRequest = { id: number; body: unknown } | { cancel: number };

/** From a thread: it is ready for requests; a part of an answer (a walk's chunk); an answer. */
export type ThreadReply =
  | { ready: true }
  | { id: number; partial: unknown }
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; error: EncodedError };

/** What the thread side sends back for a thrown value: name, message, code and stack, nothing that cannot be cloned. */
export function encodeError(error: unknown): EncodedError {
  if (typeof error !== 'object' || error === null) return { name: 'Error', message: String(error) };
  const e = error as {
    name?: unknown;
    message?: unknown;
    code?: unknown;
    stack?: unknown;
    options?: { retryable?: unknown; retryAfterSeconds?: unknown };
  };
  const encoded: EncodedError = {
    name: typeof e.name === 'string' ? e.name : 'Error',
    message: typeof e.message === 'string' ? e.message : Object.prototype.toString.call(error),
  };
  if (typeof e.code === 'string') encoded.code = e.code;
  if (typeof e.stack === 'string') encoded.stack = e.stack;
  if (typeof e.options?.retryable === 'boolean') encoded.retryable = e.options.retryable;
  if (typeof e.options?.retryAfterSeconds === 'number') encoded.retryAfterSeconds = e.options.retryAfterSeconds;
  return encoded;
}
