import { lstat, realpath } from 'node:fs/promises';
import path from 'node:path';
import { ScanError } from '@reposcan/contracts';
import { isWithin } from './is-within.js';
import { PROVES_PATHS } from '@reposcan/core/proven-path';
import { readGitHead } from './read-git-head.js';
import { readWorkTree, type LocalWorkTree } from './read-work-tree.js';

export interface LocalRoot {
  /** The real path of the folder (symlinks resolved); scan this, not the input. */
  root: string;
  /** The folder's base name, used as the repository name. */
  name: string;
  /** The branch named in the work tree's `.git/HEAD`, or null. */
  branch: string | null;
  /** The git work tree the folder lies in (its top inside the same allowed root), or null. */
  workTree: LocalWorkTree | null;
}

// C0 controls (NUL included), DEL and C1 controls.
// eslint-disable-next-line no-control-regex -- control characters are exactly what it refuses
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * Resolves a server-local path that a scan request names, or refuses it.
 *
 * Order matters: disabled (or no /proc to prove the engine's opens with, see README) → malformed →
 * outside the allowed roots → missing → not a folder.
 * Containment is decided on real paths (input and roots through `realpath`), so symlinks,
 * `/proc/self/root/…` and `/proc/<pid>/cwd` count where they really lead. A missing path is
 * judged by its deepest existing ancestor, so a path outside the roots is refused the same
 * way whether or not it exists (no existence oracle). Git runs only to read the index of a work
 * tree found inside the allowed root (readWorkTree).
 */
export async function resolveLocalRoot(input: string, allowedRoots: readonly string[] | null): Promise<LocalRoot> {
  if (allowedRoots === null || allowedRoots.length === 0) {
    throw new ScanError(
      'LOCAL_PATHS_DISABLED',
      'Scanning server-local paths is disabled on this server; give a remote repository URL or upload a ZIP instead.',
    );
  }
  if (!PROVES_PATHS) {
    throw new ScanError(
      'LOCAL_PATHS_DISABLED',
      'Scanning server-local paths needs a Linux server with /proc, which proves every file read is inside the folder; give a remote repository URL or upload a ZIP instead.',
    );
  }
  assertWellFormed(input);

  const roots = await realRoots(allowedRoots);
  const real = await realpathOrNull(input);
  const judged = real ?? (await realPathOfMissing(input));
  if (!roots.some((root) => isWithin(root, judged))) {
    throw new ScanError(
      'OUTSIDE_ALLOWED_ROOTS',
      'This path is outside the folders this server allows scanning (ALLOWED_LOCAL_ROOTS); give a path inside one of them.',
    );
  }
  // lstat, not stat: `real` has no symlinks left, so a symlink here means it was just swapped in.
  const stats = real === null ? null : await lstat(real).catch(() => null);
  if (real === null || stats === null) {
    throw new ScanError(
      'LOCAL_PATH_NOT_FOUND',
      'No folder exists at this path (or it cannot be read); check the path and try again.',
    );
  }
  if (!stats.isDirectory()) {
    throw new ScanError('LOCAL_PATH_NOT_FOUND', "This path is not a folder; give the path of the repository's folder.");
  }
  // The allowed root the folder lies in: a `.git` above it is not looked for.
  const ceiling = roots.filter((root) => isWithin(root, real)).sort((a, b) => b.length - a.length)[0] ?? real;
  const workTree = await readWorkTree(real, ceiling);
  return {
    root: real,
    name: path.basename(real) || real,
    branch: await readGitHead(workTree?.top ?? real),
    workTree,
  };
}

function assertWellFormed(input: string): void {
  if (CONTROL_CHARACTER.test(input)) {
    throw new ScanError(
      'INVALID_REPO_PATH',
      'The path contains control characters (such as NUL or a line break); send the plain absolute path.',
    );
  }
  if (!path.isAbsolute(input)) {
    throw new ScanError(
      'INVALID_REPO_PATH',
      'A local path must be absolute (start with "/"); send the full path of the folder.',
    );
  }
  // Refused outright rather than normalised: lexical `..` after a symlink means something else
  // to the kernel, and the missing-path check below must not be fooled by it.
  if (input.split('/').includes('..')) {
    throw new ScanError(
      'OUTSIDE_ALLOWED_ROOTS',
      'Local paths may not contain ".." segments; send the absolute path of a folder inside the allowed roots.',
    );
  }
}

/** Real paths of the configured roots; roots that are relative or do not exist allow nothing. */
async function realRoots(allowedRoots: readonly string[]): Promise<string[]> {
  const resolved = await Promise.all(
    allowedRoots.filter((root) => path.isAbsolute(root)).map((root) => realpathOrNull(root)),
  );
  return resolved.filter((root): root is string => root !== null);
}

async function realpathOrNull(target: string): Promise<string | null> {
  try {
    return await realpath(target);
  } catch {
    return null;
  }
}

/** Where a path that cannot be resolved would be: its deepest resolvable ancestor, real, plus the rest. */
async function realPathOfMissing(input: string): Promise<string> {
  const rest: string[] = [];
  let current = path.resolve(input);
  for (;;) {
    const parent = path.dirname(current);
    if (parent === current) return path.join(current, ...rest);
    rest.unshift(path.basename(current));
    current = parent;
    const real = await realpathOrNull(current);
    if (real !== null) return path.join(real, ...rest);
  }
}
