import { Router } from 'express';
import type { RequestHandler } from 'express';
import { InspectRequest } from '@reposcan/contracts';
import type { EngineLimits } from '@reposcan/core';
import type { SourceSettings } from '@reposcan/sources';
import { whenClientGoes } from '../http/client-gone.js';
import { sendSuccess } from '../http/envelope.js';
import { gitTokenOf } from '../http/git-token.js';
import { clientOf } from '../http/rate-limit.js';
import { requireJson } from '../http/require-json.js';
import { parseOrThrow } from '../http/validate.js';
import type { InspectService } from '../services/inspect-service.js';
import { previewRequest } from '../services/scan-requests.js';
import { methodNotAllowed } from './method-not-allowed.js';

export function inspectRoutes(deps: {
  inspect: InspectService;
  settings: SourceSettings;
  limits: EngineLimits;
  limiter: RequestHandler;
}): Router {
  const router = Router();
  router
    .route('/v1/inspect')
    .post(deps.limiter, requireJson, async (req, res) => {
      const { git_token, ...request } = parseOrThrow(InspectRequest, req.body, 'body');
      const gitToken = gitTokenOf(req, git_token);
      // A client that gives up (a live preview typing on) must not keep a slot, a thread and a clone busy.
      const abandoned = whenClientGoes(res, 'preview');
      const data = await previewRequest(deps, request, clientOf(req), gitToken, abandoned);
      sendSuccess(
        res,
        200,
        `Preview completed: ${data.summary.total_files} files, about ${data.summary.formatted.estimated_tokens} tokens.`,
        data,
      );
    })
    .all(methodNotAllowed(['POST']));
  return router;
}
