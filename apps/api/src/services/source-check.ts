import { ScanError } from '@reposcan/contracts';
import type { ScanRequestRecord } from '@reposcan/contracts';
import {
  assertCredentialTransport,
  baseRefNotSupported,
  checkRemotePolicy,
  parseGitCredential,
  parseRepoPath,
  resolveLocalRoot,
} from '@reposcan/sources';
import type { SourceSettings } from '@reposcan/sources';

/**
 * Refuse what policy refuses before anything is queued, so the caller gets the 400/403/422
 * at once instead of a failed scan later. The worker checks again before it clones.
 */
export async function toRequestSource(
  repoPath: string,
  branch: string | undefined,
  settings: SourceSettings,
  gitToken?: string,
): Promise<ScanRequestRecord['source']> {
  return (await checkRequestSource(repoPath, branch, settings, gitToken)).source;
}

/** toRequestSource, with the addresses a remote host resolved to (none for a local path). */
export async function checkRequestSource(
  repoPath: string,
  branch: string | undefined,
  settings: SourceSettings,
  gitToken?: string,
): Promise<{ source: ScanRequestRecord['source']; addresses: string[] }> {
  const parsed = parseRepoPath(repoPath);
  if (gitToken !== undefined) {
    if (parsed.kind === 'local') throw gitTokenNotAccepted('a local path, which is read as it is on disk');
    parseGitCredential(gitToken);
    assertCredentialTransport(parsed.url);
  }
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
  return {
    source: {
      type: 'remote',
      repo_path: repoPath,
      branch: branch ?? null,
      ...(gitToken === undefined ? {} : { credential: 'request' as const }),
    },
    addresses,
  };
}

/** A git token sent where no git host is asked: an upload or a local path. */
export function gitTokenNotAccepted(what: string): ScanError {
  return new ScanError(
    'GIT_TOKEN_NOT_ACCEPTED',
    `A git token is only for cloning a remote repository, not for ${what}; send the request without git_token or the X-Git-Token header.`,
  );
}

/**
 * A change digest (`base_ref`) diffs two commits of a remote repository, written whole: refused at
 * once for a local path or an upload, and beside `max_tokens_per_part`.
 */
export function checkChangeDigest(
  options: { base_ref: string | null; max_tokens_per_part: number | null },
  sourceType: ScanRequestRecord['source']['type'],
): void {
  if (options.base_ref === null) return;
  if (sourceType !== 'remote') throw baseRefNotSupported(sourceType);
  if (options.max_tokens_per_part !== null)
    throw new ScanError(
      'INVALID_REQUEST',
      'base_ref (a change digest) cannot be cut into parts; leave max_tokens_per_part out, or narrow the digest with include_patterns.',
    );
}
