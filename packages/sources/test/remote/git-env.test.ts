import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createGitEnv, parseRepoPath } from '../../src/remote/index.js';
import type { RemoteSpec } from '../../src/remote/index.js';

// The service-owned git home and environment. Creating them starts no process; one test runs the wrapper.

const roots: string[] = [];
afterAll(() => roots.forEach((root) => rmSync(root, { recursive: true, force: true })));

function tempRoot(): string {
  const root = mkdtempSync(path.join(os.tmpdir(), 'reposcan-git-env-'));
  roots.push(root);
  return root;
}

function spec(input: string): RemoteSpec {
  const parsed = parseRepoPath(input);
  if (parsed.kind !== 'remote') throw new Error('not a remote');
  return parsed.url;
}

/** An https-only environment for a GitHub repository, pinned to one public address. */
function githubEnv(homeRoot: string): ReturnType<typeof createGitEnv> {
  return createGitEnv(spec('https://github.com/a/b'), {
    allowHttp: false,
    pinnedAddresses: ['140.82.112.3'],
    homeRoot,
  });
}

describe('createGitEnv', () => {
  it('writes the hardened config and the process-group wrapper into a private home', async () => {
    const homeRoot = tempRoot();
    const gitEnv = await githubEnv(homeRoot);
    const home = gitEnv.env.HOME ?? '';
    const config = readFileSync(path.join(home, '.gitconfig'), 'utf8');
    for (const line of [
      'allow = never',
      'followRedirects = false',
      'symlinks = false',
      'autocrlf = false',
      'eol = lf',
      'hooksPath = /nonexistent-reposcan-hooks',
      'fsmonitor = false',
      'recurse = false',
      'fsckObjects = true',
      'templateDir =',
    ]) {
      expect(config).toContain(line);
    }
    expect(config).not.toContain('[protocol "http"]');
    expect(statSync(path.dirname(home)).mode & 0o777).toBe(0o700);
    expect(statSync(gitEnv.binary).mode & 0o777).toBe(0o700);
    expect(readFileSync(gitEnv.binary, 'utf8')).toMatch(/exec '.*setsid' '.*git' "\$@"/);
  });

  it('runs git as a group leader whose wrapper says one newline on stderr, so a quiet command is not held back', async () => {
    const homeRoot = tempRoot();
    const gitEnv = await githubEnv(homeRoot);
    const pgidFile = path.join(homeRoot, 'pgid');
    // `git init -q` prints nothing: the kind of command simple-git would hold back 50 ms.
    const run = spawnSync(gitEnv.binary, ['init', '-q', path.join(homeRoot, 'repo')], {
      env: { ...gitEnv.env, REPOSCAN_GIT_PGID_FILE: pgidFile },
      encoding: 'utf8',
    });
    expect(run.status).toBe(0);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe('\n');
    expect(Number.parseInt(readFileSync(pgidFile, 'utf8'), 10)).toBe(run.pid);
  });

  it('passes an explicit environment, https only unless http is allowed', async () => {
    const homeRoot = tempRoot();
    const strict = await githubEnv(homeRoot);
    expect(strict.env).toMatchObject({
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_TERMINAL_PROMPT: '0',
      GIT_LFS_SKIP_SMUDGE: '1',
      GIT_PROTOCOL_FROM_USER: '0',
      GIT_ALLOW_PROTOCOL: 'https',
      LC_ALL: 'C',
    });
    const relaxed = await createGitEnv(spec('http://git.example.com/a/b'), {
      allowHttp: true,
      pinnedAddresses: ['10.0.0.5'],
      homeRoot,
    });
    expect(relaxed.env.GIT_ALLOW_PROTOCOL).toBe('https:http');
    expect(readFileSync(path.join(relaxed.env.HOME ?? '', '.gitconfig'), 'utf8')).toContain('[protocol "http"]');
    await expect(
      createGitEnv(spec('http://git.example.com/a/b'), { allowHttp: false, pinnedAddresses: ['10.0.0.5'], homeRoot }),
    ).rejects.toMatchObject({
      code: 'SCHEME_NOT_ALLOWED',
    });
  });

  it('pins every resolved address for host:port, and nothing for an IP literal', async () => {
    const homeRoot = tempRoot();
    const named = await createGitEnv(spec('https://git.example.com:8443/a/b'), {
      allowHttp: false,
      pinnedAddresses: ['93.184.215.14', '2606:2800:21f::1'],
      homeRoot,
    });
    expect(named.config).toEqual(['http.curloptResolve=git.example.com:8443:93.184.215.14,2606:2800:21f::1']);
    const literal = await createGitEnv(spec('https://93.184.215.14/a/b'), {
      allowHttp: false,
      pinnedAddresses: ['93.184.215.14'],
      homeRoot,
    });
    expect(literal.config).toEqual([]);
    await expect(
      createGitEnv(spec('https://github.com/a/b'), { allowHttp: false, pinnedAddresses: [], homeRoot }),
    ).rejects.toThrow(TypeError);
  });

  it('refuses a git home that others can write to', async () => {
    const homeRoot = tempRoot();
    const planted = path.join(homeRoot, `reposcan-git-${process.getuid?.() ?? 0}`);
    mkdirSync(planted);
    chmodSync(planted, 0o777);
    await expect(githubEnv(homeRoot)).rejects.toThrow(/closed to others/);
  });
});
