// Running git itself on a test tree, with no configuration of the machine or the user leaking in.
import { execFileSync, spawnSync } from 'node:child_process';

export const hasGit = spawnSync('git', ['--version']).status === 0;

/** Runs git in `cwd` and splits its `-z` output. `home` is an empty folder standing in for $HOME. */
export function gitPaths(cwd: string, home: string, args: string[]): string[] {
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
  ];
  const out = execFileSync('git', [...config, ...args], { cwd, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return out.split('\0').filter((path) => path !== '');
}

/** Untracked files git keeps (`ignored: false`) or ignores, by its ignore files, in a fresh repository at `root`. */
export function gitUntracked(root: string, home: string, ignored: boolean): string[] {
  return gitPaths(root, home, [
    'ls-files',
    '--others',
    '--exclude-standard',
    '-z',
    ...(ignored ? ['--ignored'] : []),
  ]).sort();
}
