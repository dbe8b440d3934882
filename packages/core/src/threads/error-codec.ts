// One codec for every error that crosses a thread: the thread encodes (thread-protocol.ts, so a
// thread loads none of the classes), the caller decodes into the repo's own classes, so
// `instanceof` and `code` checks hold as if the error had been thrown in the caller's thread.
import { ERROR_CODES, ScanError } from '@reposcan/contracts/error-codes';
import type { ErrorCode } from '@reposcan/contracts/error-codes';
import { ScanRootError } from '../walk/scan-root.js';
import type { ScanRootErrorCode } from '../walk/scan-root.js';
import { WalkTimeoutError } from '../walk/walk-tree.js';
import type { EncodedError } from './thread-protocol.js';

export { encodeError } from './thread-protocol.js';
export type { EncodedError } from './thread-protocol.js';

/** The repo's error classes, rebuilt by name; any other error becomes an Error of the same name and code. */
const CLASSES: Record<string, (e: EncodedError) => Error | null> = {
  ScanError: (e) =>
    ERROR_CODES.includes(e.code as ErrorCode)
      ? new ScanError(e.code as ErrorCode, e.message, {
          ...(e.retryable === undefined ? {} : { retryable: e.retryable }),
          ...(e.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: e.retryAfterSeconds }),
        })
      : null,
  ScanRootError: (e) => (e.code ? new ScanRootError(e.code as ScanRootErrorCode, e.message) : null),
  WalkTimeoutError: (e) => Object.assign(new WalkTimeoutError(0), { message: e.message }),
};

export function decodeError(encoded: EncodedError): Error {
  const error =
    CLASSES[encoded.name]?.(encoded) ??
    Object.assign(new Error(encoded.message), {
      name: encoded.name,
      ...(encoded.code === undefined ? {} : { code: encoded.code }),
    });
  // The thread's stack says where it was thrown; the caller's frames would only show the message handler.
  if (encoded.stack !== undefined) error.stack = encoded.stack;
  return error;
}
