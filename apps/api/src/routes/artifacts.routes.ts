import { stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Router } from 'express';
import type { Request, Response } from 'express';
import { openOutput, spliceFileName } from '@reposcan/core';
import type { OutputSource } from '@reposcan/core';
import { z } from 'zod';
import { ArtifactFormat, queryInt, ScanError } from '@reposcan/contracts';
import { callerOf } from '../http/api-keys.js';
import { sendSuccess, sendSuccessJson } from '../http/envelope.js';
import { scanIdParam } from '../http/scan-id-param.js';
import { parseOrThrow } from '../http/validate.js';
import type { ArtifactService } from '../services/artifact-service.js';
import type { ScanService } from '../services/scan-service.js';
import { methodNotAllowed } from './method-not-allowed.js';

const DownloadQuery = z.strictObject({
  format: ArtifactFormat,
  part: queryInt(1).optional(),
});

export function artifactRoutes(deps: { artifacts: ArtifactService; scans: ScanService }): Router {
  const router = Router();

  router
    .route('/v1/download/:scan_id')
    .get(async (req, res, next) => {
      const scanId = scanIdParam(req);
      const { format, part } = parseOrThrow(DownloadQuery, req.query, 'query');
      const file = await deps.artifacts.artifact(scanId, format, callerOf(req), part);
      const etag = file.sha256 ? `"${file.sha256}"` : undefined;
      const modified = (): Promise<Date> =>
        stat(file.spliced ? spliceFileName(file.path) : file.path).then((stats) => stats.mtime);
      if (await preconditionFailed(req, etag, modified))
        throw new ScanError(
          'PRECONDITION_FAILED',
          "The artifact is not the one the If-Match or If-Unmodified-Since header names; drop the header, or send the ETag of this scan and format (the artifact's sha256 in quotes).",
        );
      res.attachment(file.fileName);
      res.setHeader('Content-Type', file.contentType);
      if (etag !== undefined) {
        res.setHeader('ETag', etag);
        if (namesEtag(req.get('if-none-match'), etag)) {
          res.status(304).end();
          return;
        }
      }
      if (file.spliced) {
        await sendSplicedOutput(req, res, file.path);
        return;
      }
      // send handles Range (206), If-None-Match (304) and HEAD from the headers above.
      res.sendFile(
        file.path,
        { etag: !file.sha256, lastModified: true, acceptRanges: true, dotfiles: 'allow' },
        (error) => {
          if (!error || res.headersSent) return;
          // send has set `Content-Range: bytes */<size>`, which tells the client what it may ask for.
          if ((error as { status?: unknown }).status === 416) {
            next(
              new ScanError(
                'RANGE_NOT_SATISFIABLE',
                'The requested byte range is not within the artifact; ask for bytes inside the size in Content-Range, or drop the Range header.',
              ),
            );
            return;
          }
          next(error);
        },
      );
    })
    .all(methodNotAllowed(['GET', 'HEAD']));

  router
    .route('/v1/summary/:scan_id')
    .get(async (req, res) => {
      const scanId = scanIdParam(req);
      sendSuccessJson(res, 200, `Summary of scan ${scanId}.`, await deps.artifacts.summaryJson(scanId, callerOf(req)));
    })
    .all(methodNotAllowed(['GET']));

  router
    .route('/v1/cleanup/:scan_id')
    .delete(async (req, res) => {
      const scanId = scanIdParam(req);
      await deps.scans.cleanup(scanId, callerOf(req));
      sendSuccess(res, 200, `Deleted scan ID: ${scanId}`, { scan_id: scanId });
    })
    .all(methodNotAllowed(['DELETE']));
  return router;
}

/**
 * A spliced output (stored as stretches of other files) sent as sendFile sends a file: the same
 * headers, Range (one range: 206; several: the whole output), If-Range, If-Modified-Since and HEAD.
 */
async function sendSplicedOutput(req: Request, res: Response, path: string): Promise<void> {
  const modified = (await stat(spliceFileName(path))).mtime;
  const output = await openOutput(path);
  try {
    const { size } = output;
    res.setHeader('Accept-Ranges', 'bytes');
    res.setHeader('Cache-Control', 'public, max-age=0');
    res.setHeader('Last-Modified', modified.toUTCString());
    if (req.fresh) {
      res.status(304).end();
      return;
    }
    let [start, end] = [0, size];
    if (req.headers.range !== undefined && rangeStillHolds(req, res, modified)) {
      const ranges = req.range(size, { combine: true });
      if (ranges === -1) {
        res.setHeader('Content-Range', `bytes */${size}`);
        throw new ScanError(
          'RANGE_NOT_SATISFIABLE',
          'The requested byte range is not within the artifact; ask for bytes inside the size in Content-Range, or drop the Range header.',
        );
      }
      const range = ranges !== undefined && ranges !== -2 && ranges.length === 1 ? ranges[0] : undefined;
      if (range !== undefined) {
        [start, end] = [range.start, range.end + 1];
        res.status(206).setHeader('Content-Range', `bytes ${range.start}-${range.end}/${size}`);
      }
    }
    res.setHeader('Content-Length', String(end - start));
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    await pipeline(Readable.from(outputBytes(output, start, end)), res);
  } finally {
    await output.close();
  }
}

/**
 * If-Match (strong comparison: a weak tag never matches), or else If-Unmodified-Since, says the
 * client holds another version (RFC 9110 §13.2.2): checked before anything else is answered. The
 * time of the last change is read only when the request asks about it.
 */
async function preconditionFailed(
  req: Request,
  etag: string | undefined,
  modified: () => Promise<Date>,
): Promise<boolean> {
  const ifMatch = req.get('if-match');
  if (ifMatch !== undefined) return !namesEtag(ifMatch, etag);
  const since = Date.parse(req.get('if-unmodified-since') ?? '');
  return !Number.isNaN(since) && Math.floor((await modified()).getTime() / 1000) > Math.floor(since / 1000);
}

/** Whether an If-Match or If-None-Match list names `etag`, or is `*` (any version). */
function namesEtag(list: string | undefined, etag: string | undefined): boolean {
  return (list ?? '').split(',').some((t) => t.trim() === '*' || (etag !== undefined && t.trim() === etag));
}

/** Whether a Range request's If-Range (an ETag or a date) still names this output; none does. */
function rangeStillHolds(req: Request, res: Response, modified: Date): boolean {
  const ifRange = req.get('if-range');
  if (ifRange === undefined) return true;
  if (ifRange.includes('"')) return ifRange === res.getHeader('ETag');
  return Math.floor(modified.getTime() / 1000) <= Math.floor(Date.parse(ifRange) / 1000);
}

const SEND_CHUNK_BYTES = 1 << 20;

/** Bytes [start, end) of `output`, a fresh buffer at a time (the stream keeps them until sent). */
async function* outputBytes(output: OutputSource, start: number, end: number): AsyncGenerator<Buffer> {
  for (let at = start; at < end;) {
    const chunk = Buffer.allocUnsafe(Math.min(SEND_CHUNK_BYTES, end - at));
    const n = await output.read(chunk, at);
    if (n === 0) throw new Error('a spliced output ended before its length');
    yield chunk.subarray(0, n);
    at += n;
  }
}
