import { ScanError } from '@reposcan/contracts';
import { hasCode } from './has-code.js';

export { hasCode };

/** A full volume is a scan failure with its own code (DISK_FULL, 507); anything else stays as thrown. */
export function asStorageError(error: unknown): unknown {
  if (hasCode(error, 'ENOSPC', 'EDQUOT')) {
    return new ScanError(
      'DISK_FULL',
      'The data volume is full; free space or wait for the janitor to delete expired scans, then try again.',
      { cause: error },
    );
  }
  return error;
}
