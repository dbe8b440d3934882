// A served copy of the pinned corpus repository that gains commits, for the rescan and
// change-digest rows: one that changes one file, one that changes every file. The pinned
// repository is never written to, and commits are made with plumbing (no work tree of 70 MB to
// check out), with a fixed identity and date, so their ids are the same on every run and machine.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
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

export interface AddedCommit {
  /** The commit the branch named before. */
  base: string;
  /** The new commit the branch names now. */
  head: string;
}

/**
 * Adds a commit on `branch` of the bare repository `bare` whose only change is `line` appended to
 * the file `path` (which must exist there). Returns both commits.
 */
export function commitOneFileChange(bare: string, branch: string, path: string, line: string): Promise<AddedCommit> {
  return commitLineAppended(bare, branch, line, [path], `bench: one line added to ${path}`);
}

/** The same with `line` appended to every file of the branch (links and submodules stay as they are). */
export function commitEveryFileChange(bare: string, branch: string, line: string): Promise<AddedCommit> {
  return commitLineAppended(bare, branch, line, null, 'bench: one line added to every file');
}

async function commitLineAppended(
  bare: string,
  branch: string,
  line: string,
  paths: readonly string[] | null,
  message: string,
): Promise<AddedCommit> {
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
    const files = (await git(['ls-tree', '-r', '-z', base, '--', ...(paths ?? [])]))
      .toString('utf8')
      .split('\0')
      .filter((entry) => entry !== '')
      .map((entry) => {
        const tab = entry.indexOf('\t');
        const [mode = '', , id = ''] = entry.slice(0, tab).split(' ');
        return { mode, id, path: entry.slice(tab + 1) };
      })
      .filter((entry) => entry.mode === '100644' || entry.mode === '100755');
    for (const path of paths ?? [])
      if (!files.some((file) => file.path === path)) throw new Error(`${path} is not a file in ${branch} of ${bare}`);
    // Each file's bytes as they are (no decoding), the line after them on a line of its own,
    // hashed from files of the scratch folder by one git.
    const blobs = await git(['cat-file', '--batch'], Buffer.from(files.map((f) => `${f.id}\n`).join('')));
    const written: string[] = [];
    for (let at = 0, i = 0; i < files.length; i++) {
      const headerEnd = blobs.indexOf(0x0a, at);
      const size = Number(blobs.toString('latin1', at, headerEnd).split(' ')[2]);
      const before = blobs.subarray(headerEnd + 1, headerEnd + 1 + size);
      at = headerEnd + 1 + size + 1;
      const newline = before.length > 0 && before[before.length - 1] !== 0x0a ? '\n' : '';
      written.push(join(scratch, `blob-${i}`));
      await writeFile(written[i] as string, Buffer.concat([before, Buffer.from(`${newline}${line}\n`)]));
    }
    const ids = (await text(['hash-object', '-w', '--stdin-paths'], Buffer.from(`${written.join('\n')}\n`))).split(
      '\n',
    );
    await git(['read-tree', base]);
    await git(
      ['update-index', '-z', '--index-info'],
      Buffer.from(files.map((f, i) => `${f.mode} ${ids[i]}\t${f.path}\0`).join('')),
    );
    const tree = await text(['write-tree']);
    const head = await text(['commit-tree', tree, '-p', base, '-m', message]);
    // Only if the branch still names base: a second commit on top of the first would be another test.
    await git(['update-ref', ref, head, base]);
    // Packed, as a hosting service serves its objects: loose ones would be packed again for every
    // clone and fetch, which the rows would time as the scan's.
    await git(['repack', '-q', '-d']);
    return { base, head };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
