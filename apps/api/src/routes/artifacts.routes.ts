import { Router } from 'express';
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
      res.attachment(file.fileName);
      res.setHeader('Content-Type', file.contentType);
      if (file.sha256) {
        const etag = `"${file.sha256}"`;
        res.setHeader('ETag', etag);
        if ((req.get('if-none-match') ?? '').split(',').some((t) => t.trim() === etag || t.trim() === '*')) {
          res.status(304).end();
          return;
        }
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
