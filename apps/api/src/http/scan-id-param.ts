import type { Request } from 'express';
import { ScanError, isScanId } from '@reposcan/contracts';

/** The `{scan_id}` of the path, or a 400 before anything touches the volume. */
export function scanIdParam(req: Request): string {
  const value = req.params.scan_id;
  if (!isScanId(value)) {
    throw new ScanError(
      'INVALID_SCAN_ID',
      'scan_id must be the lowercase UUID that POST /v1/scan or /v1/upload returned.',
    );
  }
  return value;
}
