import { ScanError } from '@reposcan/contracts';
import type { ScanRequestRecord } from '@reposcan/contracts';
import { checkRemotePolicy, parseRepoPath, resolveLocalRoot } from '@reposcan/sources';
import type { SourceSettings } from '@reposcan/sources';

/**
 * Refuse what policy refuses before anything is queued, so the caller gets the 400/403/422
 * at once instead of a failed scan later. The worker checks again before it clones.
 */
export async function toRequestSource(repoPath: string, branch: string | undefined, settings: SourceSettings): Promise<ScanRequestRecord['source']> {
  const parsed = parseRepoPath(repoPath);
  if (parsed.kind === 'local') {
    if (branch !== undefined) throw new ScanError('INVALID_REQUEST', '`branch` applies to remote repositories only; a local path is scanned as it is on disk.');
    await resolveLocalRoot(parsed.path, settings.allowedLocalRoots);
    return { type: 'local', repo_path: parsed.path };
  }
  await checkRemotePolicy(parsed.url, { allowedHosts: settings.allowedHosts, allowHttp: settings.allowHttp, allowPrivateHosts: settings.allowPrivateHosts });
  return { type: 'remote', repo_path: repoPath, branch: branch ?? null };
}
