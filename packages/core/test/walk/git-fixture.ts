// Running git itself on a test tree, with no configuration of the machine or the user leaking in.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodePathBytes, pathBytesOf, shownPath } from '../../src/path-bytes.js';

export const hasGit = spawnSync('git', ['--version']).status === 0;

/**
 * Runs git in `cwd` and splits its `-z` output, each path carried as path-bytes.ts says (so is
 * `input`). `home` is an empty folder standing in for $HOME.
 */
export function gitPaths(cwd: string, home: string, args: string[], input?: string): string[] {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: home,
    XDG_CONFIG_HOME: home,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
  };
  const config = [
    '-c',
    'core.ignorecase=false',
    '-c',
    'core.excludesFile=/dev/null',
    '-c',
    'core.untrackedCache=false',
    '-c',
    'user.name=reposcan',
    '-c',
    'user.email=reposcan@example.invalid',
    // Paths given to git are paths, not globs: test names hold `*`, `?` and `[`.
    '--literal-pathspecs',
  ];
  const out = execFileSync('git', [...config, ...args], {
    cwd,
    env,
    encoding: 'buffer',
    maxBuffer: 64 * 1024 * 1024,
    ...(input === undefined ? {} : { input: pathBytesOf(input) }),
  });
  const paths: string[] = [];
  for (let from = 0; from < out.length;) {
    let to = out.indexOf(0, from);
    if (to < 0) to = out.length;
    if (to > from) paths.push(decodePathBytes(out.subarray(from, to)));
    from = to + 1;
  }
  return paths;
}

/**
 * Untracked files git keeps (`ignored: false`) or ignores, by its ignore files, in a fresh
 * repository at `root`: shown as the walk shows them.
 */
export function gitUntracked(root: string, home: string, ignored: boolean): string[] {
  return gitPaths(root, home, ['ls-files', '--others', '--exclude-standard', '-z', ...(ignored ? ['--ignored'] : [])])
    .map(shownPath)
    .sort();
}

/** What the source hands the walk for a work tree at `root`: its index and its `.git/info/exclude`. */
export function gitWorkTree(root: string, home: string): { tracked: string[]; infoExclude: Uint8Array | null } {
  const exclude = join(root, '.git', 'info', 'exclude');
  return {
    tracked: gitPaths(root, home, ['ls-files', '-z', '--cached', '--full-name']),
    infoExclude: existsSync(exclude) ? readFileSync(exclude) : null,
  };
}

/** The files git lists in the work tree at `cwd`: tracked ones and untracked ones it does not ignore, shown as the walk shows them. */
export function gitListed(cwd: string, home: string): string[] {
  return gitPaths(cwd, home, ['ls-files', '-z', '--cached', '--others', '--exclude-standard', '--full-name'])
    .map(shownPath)
    .sort();
}
