import { ScanError } from '@reposcan/contracts';

export function hasCode(error: unknown, ...codes: string[]): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && codes.includes(code);
}

/** A full volume is a scan failure with its own code (DISK_FULL, 507); anything else stays as thrown. */
export function asStorageError(error: unknown): unknown {
  if (hasCode(error, 'ENOSPC', 'EDQUOT')) {
    return new ScanError('DISK_FULL', 'The data volume is full; free space or wait for the janitor to delete expired scans, then try again.', { cause: error });
  }
  return error;
}
