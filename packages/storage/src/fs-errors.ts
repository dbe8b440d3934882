import { readdir } from 'node:fs/promises';
import { ScanError } from '@reposcan/contracts';
import { hasCode } from './has-code.js';

export { hasCode };

/** A full or read-only volume is a failure with its own code (DISK_FULL, VOLUME_READ_ONLY); anything else stays as thrown. */
export function asStorageError(error: unknown): unknown {
  if (hasCode(error, 'EROFS')) {
    return new ScanError(
      'VOLUME_READ_ONLY',
      'The data volume is mounted read-only, so nothing can be written or removed; the operator must make DATA_DIR writable again. Retry later.',
      { cause: error, retryAfterSeconds: 60 },
    );
  }
  if (hasCode(error, 'ENOSPC', 'EDQUOT')) {
    return new ScanError(
      'DISK_FULL',
      'The data volume is full; free space or wait for the janitor to delete expired scans, then try again.',
      { cause: error },
    );
  }
  return error;
}

/** The names in `dir`; none when it does not exist (yet). */
export async function readdirOrEmpty(dir: string): Promise<string[]> {
  return readdir(dir).catch((error: unknown) => {
    if (hasCode(error, 'ENOENT')) return [];
    throw error;
  });
}
