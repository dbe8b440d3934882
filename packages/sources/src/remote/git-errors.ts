import { ScanError } from '@reposcan/contracts';
import type { GitCommandError } from './git-process.js';
import type { RemoteSpec } from './remote-spec.js';

// git's own words (LC_ALL=C) → the service's codes. git's text stays in `cause` for the logs;
// user-facing messages never carry paths or command lines.

const BRANCH_MISSING = /Remote branch .* not found in upstream/;
const REDIRECTED = /returned error: 30[12378]\b/;
// The host wants a credential, or refused the one it got. git (GIT_TERMINAL_PROMPT=0) says it
// could not ask for a user name when a 401 came without one, or after one was refused.
const AUTH_REFUSED =
  /returned error: (401|403)\b|could not read (Username|Password)|terminal prompts disabled|Authentication failed|HTTP Basic: Access denied|Invalid username or (password|token)/i;
const REPO_MISSING =
  /returned error: (404|410)\b|repository '.*' not found|Repository not found|does not appear to be a git repository|project you were looking for could not be found/i;
const REFUSED_TRANSPORT = /transport '.*' not allowed/;
// curl's low-speed cut-off (GIT_HTTP_LOW_SPEED_*) and its connect time-out.
const STALLED =
  /Operation too slow|Operation timed out|Connection timed out|Failed to connect to .* after \d+ ms: Timeout|\bcurl 28\b/i;
const CORRUPT =
  /fsck error|object .* is corrupt|bad object|invalid object|index-pack failed|did not send all necessary objects/;

/** `withCredential`: git sent a credential (a request's token or GIT_CREDENTIALS_FILE's). */
export function classifyGitFailure(
  error: GitCommandError,
  spec: RemoteSpec,
  branch: string | undefined,
  withCredential: boolean,
): ScanError {
  const output = error.output;
  const cause = { cause: error };
  if (branch !== undefined && BRANCH_MISSING.test(output)) {
    return new ScanError(
      'BRANCH_NOT_FOUND',
      `The branch or tag '${branch}' does not exist in ${spec.webUrl} (it may have been deleted since it was looked up); check the name, or leave it out to scan the default branch.`,
      cause,
    );
  }
  if (REDIRECTED.test(output)) {
    return new ScanError(
      'CLONE_REDIRECT_BLOCKED',
      `${spec.webUrl} answered with a redirect, which is never followed (it could lead anywhere, an internal address included); use the repository's final https URL.`,
      cause,
    );
  }
  if (AUTH_REFUSED.test(output)) return authFailed(spec, withCredential, cause);
  if (REPO_MISSING.test(output)) {
    return new ScanError(
      'REPO_NOT_FOUND',
      withCredential
        ? `${spec.webUrl} does not exist, or the git credential may not read it; check the URL and the token's access to this repository.`
        : `${spec.webUrl} does not exist or is not public.`,
      cause,
    );
  }
  if (REFUSED_TRANSPORT.test(output)) {
    return new ScanError('CLONE_FAILED', `${spec.webUrl} needs a transport this server does not use.`, cause);
  }
  if (STALLED.test(output)) {
    // Not retried: a server that did not answer for that long would most likely not answer again,
    // and each attempt holds a worker.
    return new ScanError(
      'CLONE_TIMEOUT',
      `${spec.webUrl} stopped sending data (nothing or almost nothing for too long); check that the server is up, then try again.`,
      cause,
    );
  }
  if (CORRUPT.test(output)) {
    return new ScanError('CLONE_FAILED', `${spec.webUrl} sent data that failed git's integrity checks.`, cause);
  }
  return new ScanError('CLONE_FAILED', `Fetching ${spec.webUrl} failed (network or server error); try again later.`, {
    ...cause,
    retryable: true,
  });
}

/** The git host asked for a credential, or refused the one sent: what to do about it. */
export function authFailed(spec: RemoteSpec, withCredential: boolean, options: { cause?: unknown } = {}): ScanError {
  return new ScanError(
    'REPO_AUTH_FAILED',
    withCredential
      ? `${spec.webUrl} refused the git credential: check that the token is right, has not expired or been revoked, and may read this repository (GitHub: Contents read, or the repo scope; GitLab: read_repository; Bitbucket: repository read), then submit again.`
      : `${spec.webUrl} asks for a credential: the repository is private (or does not exist). To scan a private repository send a token in git_token or the X-Git-Token header.`,
    options,
  );
}
