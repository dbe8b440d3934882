import { withOutputDefaults } from '@reposcan/contracts';
import type { InspectRequest, InspectResult, ScanRequest } from '@reposcan/contracts';
import type { EngineLimits } from '@reposcan/core';
import type { SourceSettings } from '@reposcan/sources';
import type { InspectService } from './inspect-service.js';
import type { ScanService } from './scan-service.js';
import { checkChangeDigest, checkRequestSource, toRequestSource } from './source-check.js';
import type { WorkerCoverage } from './worker-coverage.js';

/** Who asks: `client` for fair shares and limits, `owner` (the API key's name) for the scan's state. */
export interface Requester {
  client: string;
  owner: string | null;
}

/**
 * A validated scan request, from POST /v1/scan and the MCP scan tool alike: the callback URL,
 * disk room, source policy and worker coverage checked, then submitted (or completed at once from
 * the commit cache). Returns the scan's id. `gone`: the caller went away, so the cache's
 * ls-remote stops.
 */
export async function submitScanRequest(
  deps: { scans: ScanService; settings: SourceSettings; workers: WorkerCoverage },
  request: Omit<ScanRequest, 'git_token'>,
  who: Requester,
  gitToken: string | undefined,
  gone?: AbortSignal,
): Promise<string> {
  const { repo_path, branch, callback_url, cache, ...options } = request;
  const callbackUrl = await deps.scans.checkCallbackUrl(callback_url);
  await deps.scans.assertDiskRoom();
  const { source, addresses } = await checkRequestSource(repo_path, branch, deps.settings, gitToken);
  checkChangeDigest(options, source.type);
  await deps.workers.assertSomeWorkerAccepts(source, addresses);
  const state = await deps.scans.submit(source, options, {
    client: who.client,
    owner: who.owner,
    gitToken,
    callbackUrl,
    cache: cache !== false,
    ...(gone ? { signal: gone } : {}),
  });
  return state.scan_id;
}

/** A validated preview request, from POST /v1/inspect and the MCP inspect tool alike. */
export async function previewRequest(
  deps: { inspect: InspectService; settings: SourceSettings; limits: EngineLimits },
  request: Omit<InspectRequest, 'git_token'>,
  client: string,
  gitToken: string | undefined,
  abandoned: AbortSignal,
): Promise<InspectResult> {
  const { repo_path, branch, ...options } = request;
  const source = await toRequestSource(repo_path, branch, deps.settings, gitToken);
  return deps.inspect.inspect(
    {
      source,
      options: withOutputDefaults(options),
      settings: deps.settings,
      limits: deps.limits,
      gitToken: gitToken ?? null,
    },
    client,
    abandoned,
  );
}
