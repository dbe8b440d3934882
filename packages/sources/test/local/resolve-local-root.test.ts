import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ErrorCode, isScanError } from '@reposcan/contracts';
import { resolveLocalRoot } from '../../src/local/index.js';

// Layout:  <base>/allowed/repo (a repository, branch "main")
//          <base>/allowed/notes.txt, <base>/allowed/fifo
//          <base>/allowed/link-out -> <base>/outside, <base>/allowed/link-in -> repo
//          <base>/allowedX/repo (shares the prefix), <base>/outside/secret
//          <base>/via-link -> <base>/allowed (an allowed root reached through a symlink)
let base = '';
let allowed = '';
let roots: string[] = [];

beforeAll(async () => {
  base = await realpath(await mkdtemp(path.join(os.tmpdir(), 'reposcan-local-test-')));
  allowed = path.join(base, 'allowed');
  roots = [allowed];
  await mkdir(path.join(allowed, 'repo', '.git'), { recursive: true });
  await writeFile(path.join(allowed, 'repo', '.git', 'HEAD'), 'ref: refs/heads/main\n');
  await writeFile(path.join(allowed, 'notes.txt'), 'not a folder');
  execFileSync('mkfifo', [path.join(allowed, 'fifo')]);
  await mkdir(path.join(base, 'allowedX', 'repo'), { recursive: true });
  await mkdir(path.join(base, 'outside', 'secret'), { recursive: true });
  await symlink(path.join(base, 'outside'), path.join(allowed, 'link-out'));
  await symlink(path.join(allowed, 'repo'), path.join(allowed, 'link-in'));
  await symlink(allowed, path.join(base, 'via-link'));
});

afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

async function refusal(input: string, code: ErrorCode, allowedRoots: string[] | null = roots): Promise<string> {
  const error = await resolveLocalRoot(input, allowedRoots).then(
    (resolved) => {
      throw new Error(`expected ${code}, got ${JSON.stringify(resolved)}`);
    },
    (caught: unknown) => caught,
  );
  expect(isScanError(error), String(error)).toBe(true);
  expect((error as { code: string }).code).toBe(code);
  expect((error as Error).message).toMatch(/\.$/);
  return (error as Error).message;
}

describe('resolveLocalRoot: allowed', () => {
  it('resolves a folder inside an allowed root, with its name and branch', async () => {
    expect(await resolveLocalRoot(path.join(allowed, 'repo'), roots)).toEqual({
      root: path.join(allowed, 'repo'),
      name: 'repo',
      branch: 'main',
      // Not a repository git can read (a hand-made `.git` with only HEAD): a plain folder.
      workTree: null,
    });
  });

  it('accepts the allowed root itself, a trailing slash and "." segments', async () => {
    expect((await resolveLocalRoot(allowed, roots)).root).toBe(allowed);
    expect((await resolveLocalRoot(`${allowed}/repo/`, roots)).root).toBe(path.join(allowed, 'repo'));
    expect((await resolveLocalRoot(`${allowed}/./repo`, roots)).root).toBe(path.join(allowed, 'repo'));
  });

  it('returns the real path of a symlink that stays inside', async () => {
    expect(await resolveLocalRoot(path.join(allowed, 'link-in'), roots)).toMatchObject({
      root: path.join(allowed, 'repo'),
      name: 'repo',
    });
  });

  it('compares against the real path of the roots (a root given through a symlink)', async () => {
    const viaLink = path.join(base, 'via-link');
    expect((await resolveLocalRoot(path.join(allowed, 'repo'), [viaLink])).root).toBe(path.join(allowed, 'repo'));
    expect((await resolveLocalRoot(path.join(viaLink, 'repo'), roots)).root).toBe(path.join(allowed, 'repo'));
  });

  it('decides /proc/self/root/… by where it really leads', async () => {
    expect((await resolveLocalRoot(`/proc/self/root${allowed}/repo`, roots)).root).toBe(path.join(allowed, 'repo'));
  });

  it('ignores allowed roots that do not exist or are relative', async () => {
    const found = await resolveLocalRoot(path.join(allowed, 'repo'), [path.join(base, 'gone'), 'relative', allowed]);
    expect(found.root).toBe(path.join(allowed, 'repo'));
  });
});

describe('resolveLocalRoot: refused', () => {
  it('refuses everything when local paths are disabled, before looking at the path', async () => {
    await refusal(path.join(allowed, 'repo'), 'LOCAL_PATHS_DISABLED', null);
    await refusal(path.join(allowed, 'repo'), 'LOCAL_PATHS_DISABLED', []);
    await refusal('relative\u0000junk', 'LOCAL_PATHS_DISABLED', null);
  });

  it('refuses paths outside the roots', async () => {
    await refusal('/etc', 'OUTSIDE_ALLOWED_ROOTS');
    await refusal('/', 'OUTSIDE_ALLOWED_ROOTS');
    await refusal(path.join(base, 'outside'), 'OUTSIDE_ALLOWED_ROOTS');
  });

  it('refuses a sibling that only shares the prefix (/srv/allowedX vs /srv/allowed)', async () => {
    await refusal(path.join(base, 'allowedX', 'repo'), 'OUTSIDE_ALLOWED_ROOTS');
    await refusal(path.join(base, 'allowedX'), 'OUTSIDE_ALLOWED_ROOTS');
  });

  it('refuses a symlink inside a root that points outside, and paths through it', async () => {
    await refusal(path.join(allowed, 'link-out'), 'OUTSIDE_ALLOWED_ROOTS');
    await refusal(path.join(allowed, 'link-out', 'secret'), 'OUTSIDE_ALLOWED_ROOTS');
  });

  it('refuses ".." segments, even ones that would stay inside', async () => {
    await refusal(`${allowed}/../outside`, 'OUTSIDE_ALLOWED_ROOTS');
    await refusal(`${allowed}/../../etc`, 'OUTSIDE_ALLOWED_ROOTS');
    await refusal(`${allowed}/repo/../repo`, 'OUTSIDE_ALLOWED_ROOTS');
  });

  it('refuses /proc/self/root/etc and /proc/1/cwd', async () => {
    await refusal('/proc/self/root/etc', 'OUTSIDE_ALLOWED_ROOTS');
    await refusal('/proc/1/cwd', 'OUTSIDE_ALLOWED_ROOTS');
    await refusal('/proc/self/cwd', 'OUTSIDE_ALLOWED_ROOTS');
  });

  it('refuses NUL and other control characters as malformed', async () => {
    await refusal(`${allowed}/repo\u0000/etc`, 'INVALID_REPO_PATH');
    await refusal(`${allowed}\u0000`, 'INVALID_REPO_PATH');
    await refusal(`${allowed}/repo\n`, 'INVALID_REPO_PATH');
  });

  it('refuses relative paths as malformed', async () => {
    await refusal('repo', 'INVALID_REPO_PATH');
    await refusal('./repo', 'INVALID_REPO_PATH');
    await refusal('../etc', 'INVALID_REPO_PATH');
    await refusal('C:\\repo', 'INVALID_REPO_PATH');
    await refusal('', 'INVALID_REPO_PATH');
  });

  it('says "not found" for a missing path inside a root', async () => {
    await refusal(path.join(allowed, 'missing'), 'LOCAL_PATH_NOT_FOUND');
    await refusal(path.join(allowed, 'missing', 'deeper'), 'LOCAL_PATH_NOT_FOUND');
    await refusal(path.join(allowed, 'notes.txt', 'below-a-file'), 'LOCAL_PATH_NOT_FOUND');
  });

  it('does not reveal whether a path outside the roots exists: missing outside is refused as outside', async () => {
    await refusal(path.join(base, 'outside', 'missing'), 'OUTSIDE_ALLOWED_ROOTS');
    await refusal('/etc/no-such-file-here', 'OUTSIDE_ALLOWED_ROOTS');
    await refusal('/no-such-top-level-folder/x', 'OUTSIDE_ALLOWED_ROOTS');
    await refusal(path.join(allowed, 'link-out', 'missing'), 'OUTSIDE_ALLOWED_ROOTS');
    await refusal(path.join(base, 'allowedX', 'missing'), 'OUTSIDE_ALLOWED_ROOTS');
  });

  it('refuses a file or a FIFO (without opening it) as not a folder', async () => {
    expect(await refusal(path.join(allowed, 'notes.txt'), 'LOCAL_PATH_NOT_FOUND')).toMatch(/not a folder/);
    await refusal(path.join(allowed, 'fifo'), 'LOCAL_PATH_NOT_FOUND');
  });
});

describe('resolveLocalRoot never runs git in the tree', () => {
  // A repository whose config runs a command on any `git status` (core.fsmonitor) or checkout hook.
  async function trappedRepo(name: string, marker: string): Promise<string> {
    const repo = path.join(allowed, name);
    await mkdir(path.join(repo, '.git', 'hooks'), { recursive: true });
    await writeFile(path.join(repo, '.git', 'HEAD'), 'ref: refs/heads/trap\n');
    await writeFile(
      path.join(repo, '.git', 'config'),
      `[core]\n\trepositoryformatversion = 0\n\tfsmonitor = "touch ${marker}"\n\tpager = touch ${marker}\n[alias]\n\tstatus = !touch ${marker}\n`,
    );
    await writeFile(path.join(repo, '.git', 'hooks', 'post-checkout'), `#!/bin/sh\ntouch ${marker}\n`, { mode: 0o755 });
    return repo;
  }

  it('resolves a repository with core.fsmonitor = "touch <marker>" without executing anything', async () => {
    const marker = path.join(base, 'fsmonitor-ran');
    const repo = await trappedRepo('trapped', marker);
    expect(await resolveLocalRoot(repo, roots)).toMatchObject({ root: repo, branch: 'trap' });
    expect(existsSync(marker)).toBe(false);
  });

  // Proves the trap is armed: the same config does run when git itself is used there.
  it.runIf(gitAvailable())('(control) git status in such a repository does run the command', async () => {
    const marker = path.join(base, 'control-ran');
    const repo = await trappedRepo('control', marker);
    await mkdir(path.join(repo, '.git', 'objects'), { recursive: true });
    await mkdir(path.join(repo, '.git', 'refs', 'heads'), { recursive: true });
    try {
      execFileSync('git', ['status'], {
        cwd: repo,
        stdio: 'ignore',
        env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: base },
      });
    } catch {
      // git may fail afterwards on the hand-made repository; the marker is what counts.
    }
    expect(existsSync(marker)).toBe(true);
  });
});

function gitAvailable(): boolean {
  try {
    execFileSync('git', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe.runIf(gitAvailable())('resolveLocalRoot: git work trees', () => {
  const git = (cwd: string, ...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t.invalid', ...args], {
      cwd,
      stdio: 'pipe',
      env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', HOME: base },
    });

  async function workTree(name: string): Promise<string> {
    const top = path.join(allowed, name);
    await mkdir(path.join(top, 'pkg', 'app'), { recursive: true });
    git(top, 'init', '-q', '-b', 'trunk');
    await writeFile(path.join(top, '.gitignore'), '*.log\n');
    await writeFile(path.join(top, 'pkg', 'app', 'forced.log'), 'x');
    await writeFile(path.join(top, 'pkg', 'app', 'new.txt'), 'x');
    await writeFile(path.join(top, '.git', 'info', 'exclude'), '*.tmp\n');
    git(top, 'add', '-f', '.gitignore', 'pkg/app/forced.log');
    return top;
  }

  it('gives the top of the work tree, the folder below it, the tracked files and info/exclude', async () => {
    const top = await workTree('wt');
    const resolved = await resolveLocalRoot(path.join(top, 'pkg', 'app'), roots);
    expect(resolved).toMatchObject({ root: path.join(top, 'pkg', 'app'), name: 'app', branch: 'trunk' });
    expect(resolved.workTree).toEqual({
      top,
      subdir: 'pkg/app',
      tracked: ['.gitignore', 'pkg/app/forced.log'],
      infoExclude: Buffer.from('*.tmp\n'),
    });
    expect((await resolveLocalRoot(top, roots)).workTree).toMatchObject({ top, subdir: null });
  });

  it('does not look for a .git above the allowed root', async () => {
    const top = await workTree('outer');
    const inner = path.join(top, 'pkg');
    expect((await resolveLocalRoot(path.join(inner, 'app'), [inner])).workTree).toBeNull();
  });

  it('reads the index of a work tree whose core.fsmonitor is a command, without running it', async () => {
    const top = await workTree('monitored');
    const marker = path.join(base, 'work-tree-fsmonitor-ran');
    git(top, 'config', 'core.fsmonitor', `touch ${marker}`);
    expect((await resolveLocalRoot(top, roots)).workTree?.tracked).toEqual(['.gitignore', 'pkg/app/forced.log']);
    expect(existsSync(marker)).toBe(false);
    // (control) git itself runs it there.
    git(top, 'ls-files');
    expect(existsSync(marker)).toBe(true);
  });
});
