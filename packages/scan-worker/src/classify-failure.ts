import { isScanError } from '@reposcan/contracts';
import type { FailureInfo } from '@reposcan/contracts';
import { isTransientError } from '@reposcan/queue';

export interface Failure extends FailureInfo {
  retryable: boolean;
}

function errnoCode(error: unknown): string | undefined {
  for (
    let e: unknown = error, depth = 0;
    e && typeof e === 'object' && depth < 5;
    e = (e as { cause?: unknown }).cause, depth++
  ) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return code;
  }
  return undefined;
}

/** Sort a failure into what the user is told and whether another attempt could help: only a transient one can. */
export function classifyFailure(error: unknown): Failure {
  if (isScanError(error)) return { code: error.code, message: error.message, retryable: error.retryable };
  // The engine's own refusal of a scan root (core knows no HTTP codes).
  if ((error as { name?: unknown } | null | undefined)?.name === 'ScanRootError') {
    const code = String((error as { code?: unknown }).code);
    if (code.startsWith('SUBDIR_')) {
      return {
        code: 'SUBDIR_NOT_FOUND',
        message:
          'The folder named in the URL does not exist at that ref. Check the path after /tree/<ref>/ and the branch.',
        retryable: false,
      };
    }
    return {
      code: 'LOCAL_PATH_NOT_FOUND',
      message: 'The scan root could not be read as a folder. Check the path and its permissions.',
      retryable: false,
    };
  }
  if ((error as { name?: unknown }).name === 'WalkTimeoutError') {
    return {
      code: 'WALK_TIMEOUT',
      message: `The repository could not be listed in time (${(error as Error).message}). Narrow the scan with exclude_dirs, include_patterns or a subfolder URL; a repository's own .gitignore with unusual patterns can also slow it.`,
      retryable: false,
    };
  }
  const errno = errnoCode(error);
  if (errno === 'ENOSPC' || errno === 'EDQUOT') {
    return {
      code: 'DISK_FULL',
      message: 'The data volume ran out of space while writing this scan. Free space or retry later.',
      retryable: false,
    };
  }
  if (isTransientError(error)) {
    return {
      code: 'INTERNAL_ERROR',
      message:
        'The scan failed on a temporary fault (network, queue or a busy server) at every attempt. Try again in a few minutes.',
      retryable: true,
    };
  }
  // Anything else is a bug: another attempt would fail the same way, only later.
  return {
    code: 'INTERNAL_ERROR',
    message:
      'The scan failed because of an internal error; it has been logged and was not retried, as it would fail the same way. Report it with the scan id.',
    retryable: false,
  };
}
