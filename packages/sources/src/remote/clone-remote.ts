import { mkdir, readdir, realpath, rm } from 'node:fs/promises';
import path from 'node:path';
import { ScanError } from '@reposcan/contracts';
import { withDeadline } from './deadline.js';
import { directorySize, watchDirectorySize } from './directory-size-watchdog.js';
import { classifyGitFailure } from './git-errors.js';
import type { GitEnv } from './git-env.js';
import { GitCommandError, runGit } from './git-process.js';
import { assertBranchName } from './ref-name.js';
import type { RemoteSpec } from './remote-spec.js';

export interface CloneRemoteOptions {
  spec: RemoteSpec;
  /** From `resolveRef`. */
  branch: string;
  /** From `resolveRef`: only this folder is checked out (sparse, blobs fetched on demand). */
  subdir?: string | null;
  /** Must not exist yet, or be empty. Removed again when the clone fails. */
  destDir: string;
  /** Wall-clock budget for the whole clone, in milliseconds. */
  deadlineMs: number;
  /** Most bytes `destDir` may hold while and after cloning. */
  maxBytes: number;
  /** From `createGitEnv` (carries the pinned addresses). */
  gitEnv: GitEnv;
  /** Aborting kills git and rejects with the signal's reason. */
  signal?: AbortSignal;
}

export interface ClonedRemote {
  branch: string;
  /** The commit actually checked out. */
  commit: string;
  /** Scanned folder, POSIX relative to the repository root; null for the whole tree. */
  subdir: string | null;
  /** Absolute folder to scan: `destDir`, or the subdir inside it. */
  root: string;
}

/**
 * A shallow, single-branch, hook-free, symlink-free clone without submodules or LFS objects,
 * under a wall-clock deadline and an on-disk size limit; both kill git's whole process group.
 */
export async function cloneRemote(options: CloneRemoteOptions): Promise<ClonedRemote> {
  const { spec, branch, destDir, gitEnv, maxBytes } = options;
  assertBranchName(branch);
  const subdir = options.subdir ? checkSubdir(options.subdir) : null;
  await prepareDestination(destDir);

  const sizeLimit = new AbortController();
  const tooLarge = (): ScanError =>
    new ScanError('REPO_TOO_LARGE', `${spec.webUrl} is larger than the ${formatBytes(maxBytes)} this server clones.`);
  const stopWatchdog = watchDirectorySize(destDir, maxBytes, () => sizeLimit.abort(tooLarge()));
  const deadline = withDeadline(
    options.deadlineMs,
    () => new ScanError('CLONE_TIMEOUT', `Cloning ${spec.webUrl} took longer than ${Math.round(options.deadlineMs / 1000)} s.`),
    options.signal ? AbortSignal.any([sizeLimit.signal, options.signal]) : sizeLimit.signal,
  );
  const git = (args: string[], cwd: string): Promise<string> => runGit(args, { gitEnv, cwd, signal: deadline.signal });

  try {
    await git(
      [
        'clone',
        '--depth', '1',
        '--single-branch',
        '--no-tags',
        '--branch', branch,
        '--config', 'core.symlinks=false',
        // A folder scan fetches only the blobs under that folder, when the server supports filters.
        ...(subdir ? ['--filter=blob:none', '--sparse'] : []),
        '--',
        spec.cloneUrl,
        destDir,
      ],
      path.dirname(destDir),
    );
    let folder: string | null = null;
    if (subdir) {
      // Read from the tree objects, so no blob is fetched to find out.
      const entry = await git(['ls-tree', '-z', 'HEAD', '--', subdir], destDir);
      folder = folderToScan(entry, subdir, spec, branch);
      await git(folder === null ? ['sparse-checkout', 'disable'] : ['sparse-checkout', 'set', '--', folder], destDir);
    }
    const commit = (await git(['rev-parse', '--verify', 'HEAD'], destDir)).trim();
    if ((await directorySize(destDir)) > maxBytes) throw tooLarge();
    return { branch, commit, subdir: folder, root: await insideClone(destDir, folder) };
  } catch (error) {
    await rm(destDir, { recursive: true, force: true });
    throw error instanceof GitCommandError ? classifyGitFailure(error, spec, branch) : error;
  } finally {
    stopWatchdog();
    deadline.clear();
  }
}

async function prepareDestination(destDir: string): Promise<void> {
  await mkdir(path.dirname(destDir), { recursive: true });
  const existing = await readdir(destDir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [];
    throw error;
  });
  if (existing.length > 0) throw new Error(`cloneRemote: ${destDir} is not empty`);
}

/** The subdir joins destDir, so it must stay inside: plain segments only. */
function checkSubdir(subdir: string): string {
  const segments = subdir.split('/');
  if (segments.some((segment) => segment === '' || segment === '.' || segment === '..' || segment.includes('\\'))) {
    throw new ScanError('INVALID_REPO_PATH', 'The folder in the URL must be a plain relative path.');
  }
  return subdir;
}

/**
 * The folder to scan, from `ls-tree HEAD -- <subdir>`: the subdir itself, or the folder of the
 * file it names (Bitbucket's `/src/<ref>/<path>`, a `/tree/` link to a file).
 */
function folderToScan(lsTreeEntry: string, subdir: string, spec: RemoteSpec, branch: string): string | null {
  const type = /^\d+ (\w+) /.exec(lsTreeEntry)?.[1];
  if (type === 'tree') return subdir;
  if (type === 'blob') {
    const parent = path.posix.dirname(subdir);
    return parent === '.' ? null : parent;
  }
  throw new ScanError('SUBDIR_NOT_FOUND', `The folder '${subdir}' does not exist in ${spec.webUrl} at '${branch}'.`);
}

/** No links were checked out (core.symlinks=false), but the scan root is confirmed inside the clone anyway. */
async function insideClone(destDir: string, folder: string | null): Promise<string> {
  if (folder === null) return destDir;
  const root = path.join(destDir, folder);
  const [realRoot, realDest] = await Promise.all([realpath(root), realpath(destDir)]);
  if (!realRoot.startsWith(realDest + path.sep)) {
    throw new ScanError('INVALID_REPO_PATH', 'The folder in the URL leads outside the repository.');
  }
  return root;
}

function formatBytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${Math.round(bytes / (1024 * 1024))} MiB` : `${Math.round(bytes / 1024)} KiB`;
}
