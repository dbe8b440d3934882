import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { constants } from 'node:fs';
import { lstat, open } from 'node:fs/promises';
import path from 'node:path';
import { decodePathBytes } from '@reposcan/core/path-bytes';
import { isWithin } from './is-within.js';

/** A local folder that lies in a git work tree, as git sees it. */
export interface LocalWorkTree {
  /** Real path of the work tree's top folder: the walk starts here, so every `.gitignore` above the folder applies. */
  top: string;
  /** The scanned folder below `top` (POSIX), null when it is the top itself. */
  subdir: string | null;
  /** Paths git tracks (its index), relative to `top`. */
  tracked: string[];
  /** The bytes of `.git/info/exclude`, null when there is none. */
  infoExclude: Uint8Array | null;
}

const run = promisify(execFile);

/** 100 000 tracked paths take a few MB. */
const MAX_GIT_OUTPUT_BYTES = 1024 * 1024 * 1024;

/**
 * The git work tree `folder` (a real path) lies in, looked for no higher than `ceiling`, or null
 * (no `.git` on the way, or git cannot read it: the folder is then scanned as a plain folder).
 *
 * Git runs with no system or user configuration, and with the repository's own settings that
 * could start a program (`core.fsmonitor`) overridden: a repository's `.git/config` is not
 * trusted. `ls-files` reads the index only; nothing is written.
 */
export async function readWorkTree(folder: string, ceiling: string): Promise<LocalWorkTree | null> {
  const top = await findTop(folder, ceiling);
  if (top === null) return null;
  let listed: Buffer;
  let infoExclude: Uint8Array | null;
  try {
    [listed, infoExclude] = await Promise.all([
      gitAt(top, ['ls-files', '-z', '--cached', '--full-name']),
      readInfoExclude(top),
    ]);
  } catch {
    return null;
  }
  const tracked: string[] = [];
  for (let from = 0; from < listed.length;) {
    let to = listed.indexOf(0, from);
    if (to < 0) to = listed.length;
    // Bytes, not text: a name that is not UTF-8 must match the walk's name for it.
    if (to > from) tracked.push(decodePathBytes(listed.subarray(from, to)));
    from = to + 1;
  }
  const relative = path.relative(top, folder).split(path.sep).join('/');
  return {
    top,
    subdir: relative === '' ? null : relative,
    tracked,
    infoExclude,
  };
}

/** The nearest folder from `folder` up to `ceiling` holding a `.git` (a folder, or a linked worktree's file). */
async function findTop(folder: string, ceiling: string): Promise<string | null> {
  if (!isWithin(ceiling, folder)) return null;
  for (let current = folder; ; current = path.dirname(current)) {
    const stats = await lstat(path.join(current, '.git')).catch(() => null);
    if (stats !== null && (stats.isDirectory() || stats.isFile())) return current;
    if (current === ceiling || path.dirname(current) === current) return null;
  }
}

/** Runs git at the top of the work tree, trusting none of its configuration that could run a program. */
function gitAt(top: string, args: readonly string[]): Promise<Buffer> {
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: top,
    LC_ALL: 'C',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    // Discovery stops at the top: a `.git` above it is never used.
    GIT_CEILING_DIRECTORIES: path.dirname(top),
  };
  const hardened = ['-c', 'core.fsmonitor=false', '-c', 'safe.directory=*', '--no-optional-locks', ...args];
  return run('git', hardened, { cwd: top, env, encoding: 'buffer', maxBuffer: MAX_GIT_OUTPUT_BYTES }).then(
    ({ stdout }) => stdout,
  );
}

/** The repository's `info/exclude` (in the common git folder of a linked worktree), never through a link. */
async function readInfoExclude(top: string): Promise<Uint8Array | null> {
  const where = (await gitAt(top, ['rev-parse', '--git-path', 'info/exclude'])).toString('utf8').replace(/\n$/, '');
  let handle;
  try {
    handle = await open(path.resolve(top, where), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    return (await handle.stat()).isFile() ? await handle.readFile() : null;
  } finally {
    await handle.close();
  }
}
