import { Router } from 'express';
import type { Response } from 'express';
import type { ScanStateRecord } from '@reposcan/contracts';
import { sendSuccess } from '../http/envelope.js';
import type { EventStreams, EventStreamSlot } from '../http/event-streams.js';
import { callerOf } from '../http/api-keys.js';
import { clientOf } from '../http/rate-limit.js';
import { scanIdParam } from '../http/scan-id-param.js';
import type { ScanAccess, ScanService } from '../services/scan-service.js';
import { isTerminal, mayAccess, notFound, toStatus } from '../services/scan-service.js';
import { methodNotAllowed } from './method-not-allowed.js';

export function scansRoutes(deps: { scans: ScanService; streams: EventStreams }): Router {
  const router = Router();

  router
    .route('/v1/scans/:scan_id')
    .get(async (req, res) => {
      const scanId = scanIdParam(req);
      const record = await deps.scans.get(scanId, callerOf(req));
      sendSuccess(res, 200, `Scan is ${record.state}.`, toStatus(record, await deps.scans.webhook(scanId)));
    })
    .all(methodNotAllowed(['GET']));

  // Server-sent events from the state on the volume: works the same whichever process or
  // host runs the job. One `state` event per state change, `progress` per progress change.
  router
    .route('/v1/scans/:scan_id/events')
    .get(async (req, res) => {
      const scanId = scanIdParam(req);
      const slot = deps.streams.open(clientOf(req));
      try {
        await streamEvents(res, deps.scans, scanId, slot, callerOf(req));
      } finally {
        slot.release();
      }
    })
    .all(methodNotAllowed(['GET']));
  return router;
}

/** A reading's status as event data and its progress as a key, computed once for all the streams that share it. */
const rendered = new WeakMap<ScanStateRecord, { data: string; progress: string }>();
function render(record: ScanStateRecord): { data: string; progress: string } {
  let r = rendered.get(record);
  if (!r)
    rendered.set(record, (r = { data: JSON.stringify(toStatus(record)), progress: JSON.stringify(record.progress) }));
  return r;
}

/**
 * The event stream of one scan: its state now, then every change until a terminal state or the
 * client leaves. It reads nothing itself: the scan's shared watcher hands it every reading.
 * Rejects (before any header is sent) when the scan does not exist.
 */
function streamEvents(
  res: Response,
  scans: ScanService,
  scanId: string,
  slot: EventStreamSlot,
  access: ScanAccess,
): Promise<void> {
  return new Promise((resolve, reject) => {
    let last: ScanStateRecord | null = null;
    let closed = false;
    const close = (): void => {
      if (closed) return;
      closed = true;
      stop();
      if (!res.writableEnded) res.end();
      resolve();
    };
    const send = (event: 'state' | 'progress', record: ScanStateRecord): void => {
      res.write(`event: ${event}\ndata: ${render(record).data}\n\n`);
    };
    const stop = scans.watch(
      scanId,
      (record, error) => {
        if (closed) return;
        if (last === null) {
          // The first reading is the state now, or why there is no stream.
          if (error !== undefined || record === null || !mayAccess(record, access)) {
            closed = true;
            stop();
            reject(error ?? notFound(scanId));
            return;
          }
          res.status(200);
          res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
          res.setHeader('Cache-Control', 'no-cache, no-transform');
          res.setHeader('Connection', 'keep-alive');
          res.setHeader('X-Accel-Buffering', 'no');
          res.flushHeaders();
          slot.live(res, scanId);
          send('state', record);
        } else if (error !== undefined) {
          // A failed read ends nothing: the next signal or fallback tick reads again.
          return;
        } else if (record === null) {
          // Deleted while being watched: say so with a terminal state, as of now, and stop.
          const at = new Date().toISOString();
          const cancelled = { ...toStatus(last), state: 'cancelled', updated_at: at, completed_at: at };
          res.write(`event: state\ndata: ${JSON.stringify(cancelled)}\n\n`);
          return close();
        } else if (record.state !== last.state) send('state', record);
        else if (render(record).progress !== render(last).progress) send('progress', record);
        last = record;
        if (isTerminal(record)) close();
      },
      true,
    );
    // The client left (or the stream ended): stop watching.
    res.on('close', close);
  });
}
