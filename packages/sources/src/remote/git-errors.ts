import { ScanError } from '@reposcan/contracts';
import type { GitCommandError } from './git-process.js';
import type { RemoteSpec } from './remote-spec.js';

// git's own words (LC_ALL=C) → the service's codes. git's text stays in `cause` for the logs;
// user-facing messages never carry paths or command lines.

const BRANCH_MISSING = /Remote branch .* not found in upstream/;
const REDIRECTED = /returned error: 30[12378]\b/;
const REPO_MISSING =
  /returned error: (401|403|404|410)\b|repository '.*' not found|Repository not found|could not read Username|terminal prompts disabled|Authentication failed|does not appear to be a git repository|project you were looking for could not be found/i;
const REFUSED_TRANSPORT = /transport '.*' not allowed/;
// curl's low-speed cut-off (GIT_HTTP_LOW_SPEED_*) and its connect time-out.
const STALLED =
  /Operation too slow|Operation timed out|Connection timed out|Failed to connect to .* after \d+ ms: Timeout|\bcurl 28\b/i;
const CORRUPT =
  /fsck error|object .* is corrupt|bad object|invalid object|index-pack failed|did not send all necessary objects/;

export function classifyGitFailure(error: GitCommandError, spec: RemoteSpec, branch?: string): ScanError {
  const output = error.output;
  const cause = { cause: error };
  if (branch !== undefined && BRANCH_MISSING.test(output)) {
    return new ScanError('BRANCH_NOT_FOUND', `The branch or tag '${branch}' does not exist in ${spec.webUrl}.`, cause);
  }
  if (REDIRECTED.test(output)) {
    return new ScanError(
      'CLONE_REDIRECT_BLOCKED',
      `${spec.webUrl} answered with a redirect, which is never followed (it could lead anywhere, an internal address included); use the repository's final https URL.`,
      cause,
    );
  }
  if (REPO_MISSING.test(output)) {
    return new ScanError('REPO_NOT_FOUND', `${spec.webUrl} does not exist or is not public.`, cause);
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
