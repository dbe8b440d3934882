// A served copy of the pinned corpus repository that gains one commit changing one file, for the
// rescan and change-digest rows: the pinned repository is never written to, and the commit is
// made with plumbing (no work tree of 70 MB to check out), with a fixed identity and date, so its
// id is the same on every run and machine.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { benchGitEnv } from './corpora.js';

const run = promisify(execFile);

/** The commit's date: a day after the corpus commit's. */
const COMMIT_DATE = '2025-01-02T00:00:00Z';

/**
 * Copies the bare repository `from` to `to` (objects, pack bitmap and refs as they are) and lets
 * its server answer partial clones, as hosting services do: `uploadpack.allowFilter` (without
 * it `git http-backend` ignores a client's `--filter`) and `uploadpack.allowAnySHA1InWant` (a
 * client fetching the blobs it lacks by id).
 */
export async function copyServedRepo(from: string, to: string): Promise<void> {
  await run('cp', ['-a', from, to]);
  const env = benchGitEnv(COMMIT_DATE);
  for (const [key, value] of [
    ['uploadpack.allowFilter', 'true'],
    ['uploadpack.allowAnySHA1InWant', 'true'],
  ] as const)
    await run('git', ['--git-dir', to, 'config', key, value], { env });
}

export interface OneFileCommit {
  /** The commit the branch named before. */
  base: string;
  /** The new commit the branch names now. */
  head: string;
}

/**
 * Adds a commit on `branch` of the bare repository `bare` whose only change is `line` appended to
 * the text file `path` (which must exist there). Returns both commits.
 */
export async function commitOneFileChange(
  bare: string,
  branch: string,
  path: string,
  line: string,
): Promise<OneFileCommit> {
  const scratch = await mkdtemp(join(tmpdir(), 'reposcan-bench-commit-'));
  // A throwaway index: the bare repository has none, and the branch's tree is read into it whole.
  const env = { ...benchGitEnv(COMMIT_DATE), GIT_INDEX_FILE: join(scratch, 'index') };
  const git = async (args: string[], input?: Buffer): Promise<Buffer> => {
    const child = run('git', ['--git-dir', bare, ...args], { env, maxBuffer: 1 << 28, encoding: 'buffer' });
    if (input !== undefined) child.child.stdin?.end(input);
    return (await child).stdout;
  };
  const text = async (args: string[], input?: Buffer): Promise<string> =>
    (await git(args, input)).toString('utf8').trim();
  try {
    const ref = `refs/heads/${branch}`;
    const base = await text(['rev-parse', '--verify', `${ref}^{commit}`]);
    const mode = (await text(['ls-tree', base, '--', path])).split(' ')[0];
    if (mode !== '100644' && mode !== '100755') throw new Error(`${path} is not a file in ${branch} of ${bare}`);
    // The file's bytes as they are (no decoding), the line after them on a line of its own.
    const before = await git(['cat-file', 'blob', `${base}:${path}`]);
    const newline = before.length > 0 && before[before.length - 1] !== 0x0a ? '\n' : '';
    const blob = await text(
      ['hash-object', '-w', '--stdin'],
      Buffer.concat([before, Buffer.from(`${newline}${line}\n`)]),
    );
    await git(['read-tree', base]);
    await git(['update-index', '--cacheinfo', `${mode},${blob},${path}`]);
    const tree = await text(['write-tree']);
    const head = await text(['commit-tree', tree, '-p', base, '-m', `bench: one line added to ${path}`]);
    // Only if the branch still names base: a second commit on top of the first would be another test.
    await git(['update-ref', ref, head, base]);
    return { base, head };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
