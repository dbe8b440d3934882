import { ScanError } from '@reposcan/contracts';
import type { ScanRequestRecord } from '@reposcan/contracts';
import { checkRemotePolicy, parseRepoPath, resolveLocalRoot } from '@reposcan/sources';
import type { SourceSettings } from '@reposcan/sources';

/**
 * Refuse what policy refuses before anything is queued, so the caller gets the 400/403/422
 * at once instead of a failed scan later. The worker checks again before it clones.
 */
export async function toRequestSource(
  repoPath: string,
  branch: string | undefined,
  settings: SourceSettings,
): Promise<ScanRequestRecord['source']> {
  return (await checkRequestSource(repoPath, branch, settings)).source;
}

/** toRequestSource, with the addresses a remote host resolved to (none for a local path). */
export async function checkRequestSource(
  repoPath: string,
  branch: string | undefined,
  settings: SourceSettings,
): Promise<{ source: ScanRequestRecord['source']; addresses: string[] }> {
  const parsed = parseRepoPath(repoPath);
  if (parsed.kind === 'local') {
    if (branch !== undefined)
      throw new ScanError(
        'INVALID_REQUEST',
        '`branch` applies to remote repositories only; a local path is scanned as it is on disk.',
      );
    await resolveLocalRoot(parsed.path, settings.allowedLocalRoots);
    return { source: { type: 'local', repo_path: parsed.path }, addresses: [] };
  }
  const addresses = await checkRemotePolicy(parsed.url, {
    allowedHosts: settings.allowedHosts,
    allowHttp: settings.allowHttp,
    allowPrivateHosts: settings.allowPrivateHosts,
  });
  return { source: { type: 'remote', repo_path: repoPath, branch: branch ?? null }, addresses };
}
