import { openOutput } from '@reposcan/core';
import { Router } from 'express';
import type { ErrorRequestHandler, Request, Response } from 'express';
import { createReposcanMcpServer, DigestCache, serveMcpHttpRequest } from '@reposcan/mcp';
import type { ReposcanBackend, TokenCounting } from '@reposcan/mcp';
import type { EngineLimits } from '@reposcan/core';
import type { Logger } from '@reposcan/runtime';
import type { SourceSettings } from '@reposcan/sources';
import { callerOf } from '../http/api-keys.js';
import { clientOf } from '../http/rate-limit.js';
import type { ArtifactService } from '../services/artifact-service.js';
import type { InspectService } from '../services/inspect-service.js';
import { previewRequest, submitScanRequest } from '../services/scan-requests.js';
import { toStatus } from '../services/scan-service.js';
import type { ScanService } from '../services/scan-service.js';
import type { WorkerCoverage } from '../services/worker-coverage.js';
import { methodNotAllowed } from './method-not-allowed.js';

export interface McpRouteDeps {
  version: string;
  scans: ScanService;
  artifacts: ArtifactService;
  inspect: InspectService;
  settings: SourceSettings;
  workers: WorkerCoverage;
  limits: EngineLimits;
  /** The scans budget of POST /v1/scan and the previews budget of /v1/inspect. */
  spendScan: (req: Request) => Promise<void>;
  spendInspect: (req: Request) => Promise<void>;
  log: Logger;
  /** Where read_digest and read_scan_file count: the runtime's token thread, off the event loop. */
  counting: TokenCounting;
}

/**
 * POST /mcp: the MCP tools over streamable HTTP, stateless (a server per request, no session),
 * so any API process behind a load balancer answers any call. API keys are checked ahead of it
 * as on /v1; each tool calls the service its REST route calls, with the request's key.
 */
export function mcpRoutes(deps: McpRouteDeps): Router {
  const router = Router();
  const digests = new DigestCache();
  router
    .route('/mcp')
    .post(async (req, res) => {
      const server = createReposcanMcpServer(backendFor(req, deps), {
        version: deps.version,
        digests,
        counting: deps.counting,
        unexpected: (error) => {
          deps.log.error({ err: error, requestId: String(res.locals.requestId ?? '') }, 'MCP tool failed');
          return { code: 'INTERNAL_ERROR', message: 'An internal error occurred; it has been logged. Retry later.' };
        },
      });
      await serveMcpHttpRequest(server, req, res as Response, req.body);
    })
    .all(methodNotAllowed(['POST']));
  return router;
}

/**
 * A body the JSON parser refused on /mcp, answered as the MCP SDK answers one it cannot read
 * itself: a JSON-RPC error with id null, which an MCP client reads (the REST envelope it would
 * not). Mounted after the parser and ahead of the API's error handler, to which any other error
 * goes on.
 */
export const mcpBodyErrors: ErrorRequestHandler = (err, _req, res, next) => {
  const refusal = bodyRefusal(err as { type?: unknown; limit?: unknown });
  if (refusal === null) {
    next(err);
    return;
  }
  res
    .status(refusal.status)
    .json({ jsonrpc: '2.0', error: { code: refusal.code, message: refusal.message }, id: null });
};

/** The SDK's status, JSON-RPC code and message for a body-parser error (by its `type`); null for any other error. */
function bodyRefusal(error: {
  type?: unknown;
  limit?: unknown;
}): { status: number; code: number; message: string } | null {
  switch (error.type) {
    case 'entity.parse.failed':
      return { status: 400, code: -32700, message: 'Parse error: Invalid JSON' };
    case 'entity.too.large':
      return {
        status: 413,
        code: -32000,
        message: `Payload Too Large: Request body must not exceed ${String(error.limit)} bytes`,
      };
    case 'charset.unsupported':
    case 'encoding.unsupported':
      return { status: 415, code: -32000, message: 'Unsupported Media Type: the body must be UTF-8 JSON' };
    default:
      return null;
  }
}

/** The tools' view of reposcan for one HTTP request: its key's rights, its client's budgets. */
function backendFor(req: Request, deps: McpRouteDeps): ReposcanBackend {
  const access = callerOf(req);
  return {
    async inspect(request, signal) {
      await deps.spendInspect(req);
      return previewRequest(deps, request, clientOf(req), undefined, signal);
    },
    async scan(request, waitMs, signal) {
      await deps.spendScan(req);
      const scanId = await submitScanRequest(
        deps,
        request,
        { client: clientOf(req), owner: access?.name ?? null },
        undefined,
      );
      const record =
        waitMs > 0 ? await deps.scans.waitForTerminal(scanId, waitMs, signal) : await deps.scans.get(scanId);
      return toStatus(record);
    },
    async status(scanId) {
      const record = await deps.scans.get(scanId, access);
      return toStatus(record, await deps.scans.webhook(scanId));
    },
    async summary(scanId) {
      return JSON.parse(await deps.artifacts.summaryJson(scanId, access)) as Awaited<
        ReturnType<ReposcanBackend['summary']>
      >;
    },
    async jsonArtifactRange(scanId, part, start, end) {
      const file = await deps.artifacts.artifact(scanId, 'json', access, part);
      const output = await openOutput(file.path);
      try {
        const into = Buffer.allocUnsafe(Math.max(0, Math.min(end, output.size) - start));
        return into.subarray(0, await output.read(into, start));
      } finally {
        await output.close();
      }
    },
  };
}
