import { open } from 'node:fs/promises';
import { ScanError } from '@reposcan/contracts';
import { forEachLine } from '@reposcan/core';
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
  /** Where git writes the diff (outside `repoDir`, which the size limit measures); the change set points into it. */
  diffFile: string;
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
    // Into a file, not through a pipe: a change of a whole repository is as large as the repository.
    await git([
      ...DIFF_ARGS,
      `--output=${options.diffFile}`,
      baseCommit,
      'HEAD',
      '--',
      ...(options.subdir === null ? [] : [options.subdir]),
    ]);
    if ((await directorySize(repoDir)) > maxBytes) throw tooLarge();
    return { baseRef, baseCommit, diffFile: options.diffFile, changes: await readRawPatch(options.diffFile) };
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
const BINARY_LINE = /^(Binary files .* differ|GIT binary patch)$/;
const PATCH_START = Buffer.from('diff --git ');
const HUNK_START = Buffer.from('@@ ');

/** One patch of the diff file while it is read: where it starts and what its lines said so far. */
interface PatchSpan {
  at: number;
  hunks: boolean;
  binaryLine: boolean;
}

/**
 * Reads git's `diff --raw -p` output (not `-z`: the paths are quoted as git quotes them) from
 * `file` a window at a time: the raw records, one per changed path, then one patch per record in
 * the same order, each from its `diff --git` line to the next. Only the records and the headers'
 * verdicts are kept; each change names its patch as a byte range of the file.
 */
export async function readRawPatch(file: string): Promise<FileChange[]> {
  const records: RegExpExecArray[] = [];
  const patches: PatchSpan[] = [];
  let current: PatchSpan | null = null;
  let inRecords = true;
  const onLine = (line: Buffer, at: number): void => {
    if (inRecords && line[0] === 0x3a /* : */) {
      const text = line.toString('utf8');
      const match = RAW_RECORD.exec(text);
      if (!match) throw new Error(`unexpected raw diff record: ${text}`);
      records.push(match);
      return;
    }
    inRecords = false;
    if (startsWith(line, PATCH_START)) {
      current = { at, hunks: false, binaryLine: false };
      patches.push(current);
    } else if (current) {
      if (startsWith(line, HUNK_START)) current.hunks = true;
      else if (!current.binaryLine && (line[0] === 0x42 /* B */ || line[0] === 0x47) /* G */)
        current.binaryLine = BINARY_LINE.test(line.toString('utf8'));
    }
  };
  const handle = await open(file, 'r');
  let size: number;
  try {
    size = (await handle.stat()).size;
    await forEachLine(handle.createReadStream({ highWaterMark: 4 << 20, autoClose: false }), onLine);
  } finally {
    await handle.close();
  }
  if (patches.length !== records.length)
    throw new Error(`git diff gave ${records.length} changed paths but ${patches.length} patches`);
  return records.map((match, i): FileChange => {
    const [, letter = '', score = '', first = '', second] = match;
    const patch = patches[i] as PatchSpan;
    const binary = !patch.hunks && patch.binaryLine;
    // A patch runs to the next one's `diff --git` line, the last one to the end of the output.
    const end = patches[i + 1]?.at ?? size;
    const diff = { at: patch.at, length: binary ? 0 : end - patch.at };
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

function startsWith(line: Buffer, prefix: Buffer): boolean {
  return line.length >= prefix.length && line.compare(prefix, 0, prefix.length, 0, prefix.length) === 0;
}
