import { Router } from 'express';
import type { Request, Response } from 'express';
import type { ScanStateRecord } from '@reposcan/contracts';
import { sendSuccess } from '../http/envelope.js';
import { scanIdParam } from '../http/scan-id-param.js';
import type { ScanService } from '../services/scan-service.js';
import { isTerminal, toStatus } from '../services/scan-service.js';
import type { StateWatch } from '../services/state-watch.js';
import { methodNotAllowed } from './method-not-allowed.js';

const HEARTBEAT_MS = 15_000;

export function scansRoutes(deps: { scans: ScanService; pollMs?: number }): Router {
  const router = Router();
  const pollMs = deps.pollMs ?? 250;

  router
    .route('/v1/scans/:scan_id')
    .get(async (req, res) => {
      const record = await deps.scans.get(scanIdParam(req));
      sendSuccess(res, 200, `Scan is ${record.state}.`, toStatus(record));
    })
    .all(methodNotAllowed(['GET']));

  // Server-sent events from the state on the volume: works the same whichever process or
  // host runs the job. One `state` event per state change, `progress` per progress change.
  router
    .route('/v1/scans/:scan_id/events')
    .get(async (req, res) => {
      const scanId = scanIdParam(req);
      // Watching before the first read: a change in between still wakes the loop.
      const watch = deps.scans.watch(scanId);
      try {
        await streamEvents(req, res, deps.scans, scanId, watch, pollMs);
      } finally {
        watch.close();
      }
    })
    .all(methodNotAllowed(['GET']));
  return router;
}

/** The event stream of one scan: its state now, then every change until a terminal state or the client leaves. */
async function streamEvents(req: Request, res: Response, scans: ScanService, scanId: string, watch: StateWatch, pollMs: number): Promise<void> {
  let last = await scans.get(scanId);
  res.status(200);
  res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
  res.setHeader('Cache-Control', 'no-cache, no-transform');
  res.setHeader('Connection', 'keep-alive');
  res.setHeader('X-Accel-Buffering', 'no');
  res.flushHeaders();
  const send = (event: 'state' | 'progress', record: ScanStateRecord): void => {
    res.write(`event: ${event}\ndata: ${JSON.stringify(toStatus(record))}\n\n`);
  };
  send('state', last);
  if (isTerminal(last)) return void res.end();

  const gone = new AbortController();
  req.on('close', () => gone.abort());
  let lastBeat = Date.now();
  while (!gone.signal.aborted) {
    await watch.next(pollMs, gone.signal);
    if (gone.signal.aborted) break;
    const record = await scans.get(scanId).catch(() => null);
    if (!record) {
      // Deleted while being watched: say so with a terminal state and stop.
      res.write(`event: state\ndata: ${JSON.stringify({ ...toStatus(last), state: 'cancelled' })}\n\n`);
      break;
    }
    if (record.state !== last.state) send('state', record);
    else if (JSON.stringify(record.progress) !== JSON.stringify(last.progress)) send('progress', record);
    else if (Date.now() - lastBeat > HEARTBEAT_MS) {
      res.write(': keep-alive\n\n');
      lastBeat = Date.now();
    }
    last = record;
    if (isTerminal(record)) break;
  }
  res.end();
}
