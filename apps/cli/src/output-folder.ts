import { mkdir, realpath } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { UsageError } from './exit-codes.js';
import { userCacheFolder } from './user-cache-folder.js';

export interface OutputFolder {
  /** Absolute path of the folder the files go to (created). */
  dir: string;
  /** Why it is not the current folder, when -o was not given and the current folder lies in the scanned one. */
  movedBecause: string | null;
}

/**
 * Where `scan` writes. `-o` wins. Without it, the current folder, unless that lies inside the
 * folder being scanned: then `<user cache>/reposcan/out/<name>`, so no scan ever reads the
 * digests of an earlier one (`scan --local .` would otherwise find its last outputs and grow).
 */
export async function chooseOutputFolder(
  output: string | null,
  scanned: string | null,
  name: string,
  io: { cwd: string; env: NodeJS.ProcessEnv },
): Promise<OutputFolder> {
  let dir = resolve(io.cwd, output ?? '.');
  let movedBecause: string | null = null;
  if (output === null && scanned !== null && isInside(await realpathOr(io.cwd), await realpathOr(scanned))) {
    dir = join(userCacheFolder(io.env), 'out', name);
    movedBecause = 'the current folder is inside the scanned one';
  }
  try {
    await mkdir(dir, { recursive: true });
  } catch (error) {
    throw new UsageError(`cannot create the output folder ${dir}: ${(error as Error).message}`);
  }
  return { dir, movedBecause };
}

/**
 * `path` relative to `root` as the walk spells it (POSIX, '' for the root itself), or null when
 * it lies outside. Both should be real paths.
 */
export function pathInside(path: string, root: string): string | null {
  const rel = relative(root, path);
  if (rel === '') return '';
  if (isAbsolute(rel) || rel === '..' || rel.startsWith(`..${sep}`)) return null;
  return rel.split(sep).join('/');
}

function isInside(path: string, root: string): boolean {
  return pathInside(path, root) !== null;
}

export async function realpathOr(path: string): Promise<string> {
  return realpath(path).catch(() => path);
}
