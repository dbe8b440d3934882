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
import { checkChangeDigest, checkRequestSource } from '../services/source-check.js';
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
      const { repo_path, branch, git_token, callback_url, ...options } = parseOrThrow(ScanRequest, req.body, 'body');
      const gitToken = gitTokenOf(req, git_token);
      const { wait } = parseOrThrow(WaitQuery, req.query, 'query');
      const callbackUrl = await deps.scans.checkCallbackUrl(callback_url);
      await deps.scans.assertDiskRoom();
      const { source, addresses } = await checkRequestSource(repo_path, branch, deps.settings, gitToken);
      checkChangeDigest(options, source.type);
      await deps.workers.assertSomeWorkerAccepts(source, addresses);
      const state = await deps.scans.submit(source, options, {
        client: clientOf(req),
        owner: callerOf(req)?.name ?? null,
        gitToken,
        callbackUrl,
      });
      await respondToSubmission(req, res, deps.scans, state.scan_id, wantsToWait(req, wait), deps.waitMs);
    })
    .all(methodNotAllowed(['POST']));
  return router;
}
