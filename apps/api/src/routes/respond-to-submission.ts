import type { Request, Response } from 'express';
import type { ScanService } from '../services/scan-service.js';
import { eventsUrl, statusUrl } from '../services/scan-service.js';
import { sendError, sendSuccess } from '../http/envelope.js';

/** `?wait=false` or `Prefer: respond-async` asks for 202 at once. */
export function wantsToWait(req: Request, waitQuery: boolean): boolean {
  return waitQuery && !/\brespond-async\b/i.test(req.get('prefer') ?? '');
}

/**
 * After a scan is accepted: wait up to SCAN_WAIT_SECONDS for it to finish, then answer 201
 * with the result, the failure's own status and code (with data.scan_id), or 202 (always 202 for
 * a completed scan when the client asked not to wait).
 */
export async function respondToSubmission(
  req: Request,
  res: Response,
  scans: ScanService,
  scanId: string,
  wait: boolean,
  waitMs: number,
): Promise<void> {
  const gone = new AbortController();
  res.on('close', () => gone.abort());
  const record =
    wait && waitMs > 0 ? await scans.waitForTerminal(scanId, waitMs, gone.signal) : await scans.get(scanId);
  // Asked not to wait, the client gets 202 even for a scan completed at once (from the commit
  // cache): the status it follows says so.
  if (record.state === 'completed' && record.result && wait) {
    sendSuccess(
      res,
      201,
      `Scan completed: ${record.result.num_textual_files} textual and ${record.result.num_non_textual_files} non-textual files.`,
      record.result,
    );
    return;
  }
  if (record.state === 'failed' && record.error) {
    sendError(res, record.error.code, record.error.message, { scanId });
    return;
  }
  if (record.state === 'cancelled') {
    sendError(res, 'SCAN_CANCELLED', 'The scan was cancelled before it finished.', { scanId });
    return;
  }
  res.setHeader('Location', statusUrl(scanId));
  sendSuccess(res, 202, 'Scan accepted: follow status_url or events_url for progress and the result.', {
    scan_id: scanId,
    state: record.state,
    status_url: statusUrl(scanId),
    events_url: eventsUrl(scanId),
  });
}
