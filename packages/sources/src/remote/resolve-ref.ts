import { ScanError } from '@reposcan/contracts';
import { withDeadline } from './deadline.js';
import { classifyGitFailure } from './git-errors.js';
import type { GitEnv } from './git-env.js';
import { GitCommandError, runGit } from './git-process.js';
import { assertBranchName, isSafeRefName } from './ref-name.js';
import type { RemoteSpec } from './remote-spec.js';

export interface ResolvedRef {
  /** Branch or tag name to clone. */
  branch: string;
  /** Commit the remote advertised for it. */
  commit: string;
  /** Folder to scan (POSIX, no leading or trailing slash), from the URL; null for the whole tree. */
  subdir: string | null;
}

export interface ResolveRefOptions {
  /** Wall-clock budget for `git ls-remote`; default 30 s. */
  timeoutMs?: number;
  /** Aborting kills git and rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** What `git ls-remote --symref` said: branch and tag names → commit, and HEAD's target branch. */
export interface AdvertisedRefs {
  defaultBranch: string | null;
  heads: Map<string, string>;
  tags: Map<string, string>;
}

const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * Decides what to clone: the request's `branch` wins; else the longest ref spelled by the URL's
 * `/tree/<ref>/<folder>` segments (refs may contain `/`); else the remote's default branch.
 */
export async function resolveRef(
  spec: RemoteSpec,
  requestedBranch: string | null | undefined,
  gitEnv: GitEnv,
  options: ResolveRefOptions = {},
): Promise<ResolvedRef> {
  return (await resolveRefListing(spec, requestedBranch, gitEnv, options)).ref;
}

/** resolveRef, with everything the remote listed. */
export async function resolveRefListing(
  spec: RemoteSpec,
  requestedBranch: string | null | undefined,
  gitEnv: GitEnv,
  options: ResolveRefOptions = {},
): Promise<{ ref: ResolvedRef; refs: AdvertisedRefs }> {
  if (requestedBranch) assertBranchName(requestedBranch);
  const deadline = withDeadline(
    options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    () => new ScanError('CLONE_TIMEOUT', `${spec.webUrl} did not list its branches in time.`),
    options.signal,
  );
  let output: string;
  try {
    output = await runGit(['ls-remote', '--symref', '--', spec.cloneUrl, 'HEAD', 'refs/heads/*', 'refs/tags/*'], {
      gitEnv,
      cwd: gitEnv.runDir,
      signal: deadline.signal,
    });
  } catch (error) {
    throw error instanceof GitCommandError
      ? classifyGitFailure(error, spec, undefined, gitEnv.secrets.length > 0)
      : error;
  } finally {
    deadline.clear();
  }
  const refs = parseLsRemote(output);
  return { ref: pickRef(refs, spec, requestedBranch || null), refs };
}

/**
 * The commit a change digest's `base_ref` names now, as fetching it would take it (a full commit
 * id is itself; git looks a name up among tags before branches), or null when the listing cannot
 * tell: not a branch or tag, or a tag and a branch of that name naming different commits.
 */
export function baseCommitOf(refs: AdvertisedRefs, baseRef: string): string | null {
  if (/^[0-9a-f]{40}$/.test(baseRef)) return baseRef;
  const tag = refs.tags.get(baseRef);
  const branch = refs.heads.get(baseRef);
  if (tag !== undefined && branch !== undefined && tag !== branch) return null;
  return tag ?? branch ?? null;
}

/** Parses `git ls-remote --symref` output; names git would refuse on the command line are dropped. */
export function parseLsRemote(output: string): AdvertisedRefs {
  const refs: AdvertisedRefs = { defaultBranch: null, heads: new Map(), tags: new Map() };
  const peeled = new Map<string, string>();
  for (const line of output.split('\n')) {
    const symref = /^ref: refs\/heads\/(\S+)\tHEAD$/.exec(line);
    if (symref?.[1] !== undefined) {
      refs.defaultBranch = symref[1];
      continue;
    }
    const match = /^([0-9a-f]{40,64})\trefs\/(heads|tags)\/(\S+)$/.exec(line);
    if (!match) continue;
    const [, commit = '', kind, rawName = ''] = match;
    const isPeeled = rawName.endsWith('^{}');
    const name = isPeeled ? rawName.slice(0, -3) : rawName;
    if (!isSafeRefName(name)) continue;
    if (kind === 'heads') refs.heads.set(name, commit);
    else if (isPeeled) peeled.set(name, commit);
    else refs.tags.set(name, commit);
  }
  // An annotated tag's own id is not a commit: use the commit it points at.
  for (const [name, commit] of peeled) refs.tags.set(name, commit);
  return refs;
}

/** Which ref a URL and a `branch` name (docs/api.md, remote repositories), without git. */
export function pickRef(
  refs: AdvertisedRefs,
  spec: Pick<RemoteSpec, 'webUrl' | 'refFromUrl' | 'kindOfRef'>,
  requestedBranch: string | null,
): ResolvedRef {
  const fromUrl = spec.refFromUrl ? longestRef(refs, spec.refFromUrl) : null;
  if (requestedBranch !== null) {
    const commit = commitOf(refs, requestedBranch);
    if (commit === undefined) throw branchNotFound(requestedBranch, spec.webUrl);
    // The URL still names the folder: after its ref when that ref exists, else after its first segment.
    const rest = fromUrl?.rest ?? spec.refFromUrl?.slice(1) ?? [];
    return { branch: requestedBranch, commit, subdir: subdirOf(rest, spec.kindOfRef) };
  }
  if (spec.refFromUrl) {
    if (!fromUrl) throw branchNotFound(spec.refFromUrl[0] ?? '', spec.webUrl);
    return { branch: fromUrl.name, commit: fromUrl.commit, subdir: subdirOf(fromUrl.rest, spec.kindOfRef) };
  }
  const branch = refs.defaultBranch;
  const commit = branch === null ? undefined : refs.heads.get(branch);
  if (branch === null || commit === undefined) {
    throw new ScanError(
      'REPO_NOT_FOUND',
      `${spec.webUrl} has no default branch (it may be empty); name a branch to scan.`,
    );
  }
  return { branch, commit, subdir: null };
}

function longestRef(refs: AdvertisedRefs, segments: string[]): { name: string; commit: string; rest: string[] } | null {
  for (let length = segments.length; length > 0; length--) {
    const name = segments.slice(0, length).join('/');
    const commit = commitOf(refs, name);
    if (commit !== undefined) return { name, commit, rest: segments.slice(length) };
  }
  return null;
}

function commitOf(refs: AdvertisedRefs, name: string): string | undefined {
  return refs.heads.get(name) ?? refs.tags.get(name);
}

/** A `/blob/` link names a file: scan the folder it sits in. */
function subdirOf(rest: string[], kind: RemoteSpec['kindOfRef']): string | null {
  const folder = kind === 'blob' ? rest.slice(0, -1) : rest;
  return folder.length > 0 ? folder.join('/') : null;
}

/** A commit id as permalinks carry it (abbreviated or whole, SHA-1 or SHA-256). */
const COMMIT_ID = /^[0-9a-f]{7,64}$/i;

function branchNotFound(name: string, webUrl: string): ScanError {
  // A permalink's commit is not something a scan can name: say so rather than 'no such branch'.
  if (COMMIT_ID.test(name))
    return new ScanError(
      'BRANCH_NOT_FOUND',
      `'${name}' in ${webUrl} looks like a commit id, and no branch or tag has that name; a scan takes a branch or tag (the result names the commit it scanned), so use the URL of the branch (…/tree/<branch>), or pass the commit as base_ref to see what changed since.`,
    );
  return new ScanError(
    'BRANCH_NOT_FOUND',
    `No branch or tag named '${name}' exists in ${webUrl}; check the name (it is case-sensitive), or leave it out to scan the default branch.`,
  );
}
