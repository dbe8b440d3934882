import { ScanError } from '@reposcan/contracts';
import type { ChangeSet, FileChange } from '@reposcan/core';
import { withDeadline } from './deadline.js';
import { directorySize, watchDirectorySize } from './directory-size-watchdog.js';
import { classifyGitFailure } from './git-errors.js';
import type { GitEnv } from './git-env.js';
import { GitCommandError, runGit } from './git-process.js';
import { unquoteGitPath } from './quoted-git-path.js';
import type { RemoteSpec } from './remote-spec.js';

export type { ChangeSet, FileChange } from '@reposcan/core';

export interface DiffAgainstBaseOptions {
  spec: RemoteSpec;
  /** The clone from `cloneRemote` (its `origin` is the repository; its HEAD, the scanned commit). */
  repoDir: string;
  /** A branch, tag or full commit id of the same repository. */
  baseRef: string;
  /** Only changes under this folder (a scan of a folder): git then fetches no blob outside it. */
  subdir: string | null;
  gitEnv: GitEnv;
  deadlineMs: number;
  /** Most bytes the clone may hold once the base commit is in it too. */
  maxBytes: number;
  signal?: AbortSignal;
}

/**
 * Every option of the diff is on the command line, so no configuration changes what git reports:
 * no external diff driver or textconv filter, no colour, fixed prefixes, context and algorithm,
 * rename detection on (copies off), submodules as their commit ids.
 */
const DIFF_ARGS = [
  '-c',
  'diff.renameLimit=1000',
  'diff',
  '--no-color',
  '--no-ext-diff',
  '--no-textconv',
  '--find-renames',
  '--no-relative',
  '--src-prefix=a/',
  '--dst-prefix=b/',
  '--unified=3',
  '--diff-algorithm=myers',
  '--ignore-submodules=none',
  '--raw',
  '-p',
];

/**
 * Fetches `baseRef`'s commit into the shallow clone (depth 1: git diffs two trees without common
 * history) and diffs it against the scanned commit. The fetch is the only network step and runs
 * under the clone's hardening (pinned addresses, deadline, size limit); in a partial clone git's
 * diff then fetches the changed files' missing blobs the same way, in one batch.
 */
export async function diffAgainstBase(options: DiffAgainstBaseOptions): Promise<ChangeSet> {
  const { spec, repoDir, gitEnv, baseRef, maxBytes } = options;
  const sizeLimit = new AbortController();
  const tooLarge = (): ScanError =>
    new ScanError('REPO_TOO_LARGE', `${spec.webUrl} with the commits of both refs is larger than this server clones.`);
  const stopWatchdog = watchDirectorySize(repoDir, maxBytes, () => sizeLimit.abort(tooLarge()));
  const deadline = withDeadline(
    options.deadlineMs,
    () =>
      new ScanError(
        'CLONE_TIMEOUT',
        `Fetching '${baseRef}' of ${spec.webUrl} took longer than ${Math.round(options.deadlineMs / 1000)} s.`,
      ),
    options.signal ? AbortSignal.any([sizeLimit.signal, options.signal]) : sizeLimit.signal,
  );
  const git = (args: string[]): Promise<string> => runGit(args, { gitEnv, cwd: repoDir, signal: deadline.signal });
  try {
    try {
      await git(['fetch', '--depth', '1', '--no-tags', '--no-recurse-submodules', '--', 'origin', baseRef]);
    } catch (error) {
      if (error instanceof GitCommandError && NOT_THERE.test(error.output)) throw baseRefNotFound(baseRef, spec);
      throw error;
    }
    const baseCommit = (
      await git(['rev-parse', '--verify', '--quiet', 'FETCH_HEAD^{commit}']).catch(() => {
        throw baseRefNotFound(baseRef, spec);
      })
    ).trim();
    const output = await git([
      ...DIFF_ARGS,
      baseCommit,
      'HEAD',
      '--',
      ...(options.subdir === null ? [] : [options.subdir]),
    ]);
    if ((await directorySize(repoDir)) > maxBytes) throw tooLarge();
    return { baseRef, baseCommit, changes: parseRawPatch(output) };
  } catch (error) {
    throw error instanceof GitCommandError
      ? classifyGitFailure(error, spec, baseRef, gitEnv.secrets.length > 0)
      : error;
  } finally {
    stopWatchdog();
    deadline.clear();
  }
}

/** What git says when the remote has no such ref, or will not hand out that commit. */
const NOT_THERE = /couldn't find remote ref|not our ref|unadvertised object|no such remote ref|invalid refspec/i;

function baseRefNotFound(baseRef: string, spec: RemoteSpec): ScanError {
  return new ScanError(
    'BASE_REF_NOT_FOUND',
    `No branch, tag or commit '${baseRef}' can be fetched from ${spec.webUrl}; name one of its branches or tags, or a full commit id reachable from one.`,
  );
}

const RAW_RECORD = /^:\d{6} \d{6} [0-9a-f]+ [0-9a-f]+ ([AMDTR])(\d*)\t([^\t]*)(?:\t(.*))?$/s;

/**
 * Output of `git diff --raw -p` (not `-z`, whose raw bytes would not survive runGit's text; the
 * paths are quoted as git quotes them): the raw records, one per changed path, then one patch per
 * record in the same order, each from its `diff --git` line.
 */
export function parseRawPatch(output: string): FileChange[] {
  const lines = output.split('\n');
  const records: RegExpExecArray[] = [];
  let at = 0;
  for (; at < lines.length && (lines[at] as string).startsWith(':'); at++) {
    const match = RAW_RECORD.exec(lines[at] as string);
    if (!match) throw new Error(`unexpected raw diff record: ${lines[at]}`);
    records.push(match);
  }
  const patches: string[] = [];
  let current: string[] | null = null;
  for (; at < lines.length; at++) {
    const line = lines[at] as string;
    if (line.startsWith('diff --git ')) {
      if (current) patches.push(`${current.join('\n')}\n`);
      current = [line];
    } else if (current) current.push(line);
  }
  // The last patch ends with the output's final newline, which split() left as an empty line.
  if (current) patches.push(`${current.join('\n').replace(/\n$/, '')}\n`);
  if (patches.length !== records.length)
    throw new Error(`git diff gave ${records.length} changed paths but ${patches.length} patches`);
  return records.map((match, i): FileChange => {
    const [, letter = '', score = '', first = '', second] = match;
    const patch = patches[i] as string;
    const binary = !/^@@ /m.test(patch) && /^(Binary files .* differ|GIT binary patch)$/m.test(patch);
    const diff = binary ? '' : patch;
    const status =
      letter === 'A' ? 'added' : letter === 'D' ? 'deleted' : letter === 'R' ? 'renamed' : ('modified' as const);
    if (status === 'renamed')
      return {
        status,
        path: unquoteGitPath(second ?? ''),
        oldPath: unquoteGitPath(first),
        similarity: score === '' ? null : Number(score),
        binary,
        diff,
      };
    return { status, path: unquoteGitPath(first), oldPath: null, similarity: null, binary, diff };
  });
}
