import { Router } from 'express';
import type { RequestHandler } from 'express';
import { ScanRequest, WaitQuery } from '@reposcan/contracts';
import type { SourceSettings } from '@reposcan/sources';
import { callerOf } from '../http/api-keys.js';
import { gitTokenOf } from '../http/git-token.js';
import { clientOf } from '../http/rate-limit.js';
import { requireJson } from '../http/require-json.js';
import { parseOrThrow } from '../http/validate.js';
import type { ScanService } from '../services/scan-service.js';
import { submitScanRequest } from '../services/scan-requests.js';
import type { WorkerCoverage } from '../services/worker-coverage.js';
import { methodNotAllowed } from './method-not-allowed.js';
import { respondToSubmission, wantsToWait } from './respond-to-submission.js';

export function scanRoutes(deps: {
  scans: ScanService;
  settings: SourceSettings;
  workers: WorkerCoverage;
  waitMs: number;
  limiter: RequestHandler;
}): Router {
  const router = Router();
  router
    .route('/v1/scan')
    .post(deps.limiter, requireJson, async (req, res) => {
      const { git_token, ...request } = parseOrThrow(ScanRequest, req.body, 'body');
      const gitToken = gitTokenOf(req, git_token);
      const { wait } = parseOrThrow(WaitQuery, req.query, 'query');
      const gone = new AbortController();
      res.on('close', () => gone.abort());
      const scanId = await submitScanRequest(
        deps,
        request,
        { client: clientOf(req), owner: callerOf(req)?.name ?? null },
        gitToken,
        gone.signal,
      );
      await respondToSubmission(req, res, deps.scans, scanId, wantsToWait(req, wait), deps.waitMs);
    })
    .all(methodNotAllowed(['POST']));
  return router;
}
