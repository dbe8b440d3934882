import type { LookupAddress } from 'node:dns';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ScanError } from '@reposcan/contracts';
import * as gitProcess from '../../src/remote/git-process.js';
import type * as GitProcessModule from '../../src/remote/git-process.js';
import { checkRemotePolicy, cloneRemote, createGitEnv, parseRepoPath, resolveRef } from '../../src/remote/index.js';
import type { RemotePolicy } from '../../src/remote/index.js';

// Hostile inputs end before any git process starts or any connection is made: the spy on the
// one function that starts git stays untouched, and the injected resolver is the only "network".

vi.mock('../../src/remote/git-process.js', async (importOriginal) => {
  const actual = await importOriginal<typeof GitProcessModule>();
  return { ...actual, runGit: vi.fn(actual.runGit) };
});

const runGit = vi.mocked(gitProcess.runGit);
const homeRoot = mkdtempSync(path.join(os.tmpdir(), 'reposcan-refusals-'));
afterAll(() => rmSync(homeRoot, { recursive: true, force: true }));

const STRICT: RemotePolicy = {
  allowedHosts: ['github.com', 'gitlab.com', 'bitbucket.org', 'codeberg.org', 'gitea.com'],
  allowHttp: false,
  allowPrivateHosts: false,
};

function resolvesTo(address: string) {
  return vi.fn((_host: string, _options: { all: true }): Promise<LookupAddress[]> =>
    Promise.resolve([{ address, family: 4 }]),
  );
}

/** What the worker does, in order, up to the clone. */
async function scanAttempt(
  repoPath: string,
  branch: string | null,
  policy: RemotePolicy,
  lookup: ReturnType<typeof resolvesTo>,
): Promise<never> {
  const parsed = parseRepoPath(repoPath);
  if (parsed.kind !== 'remote') throw new Error('not a remote');
  const pinnedAddresses = await checkRemotePolicy(parsed.url, policy, { lookup });
  const gitEnv = await createGitEnv(parsed.url, { allowHttp: policy.allowHttp, pinnedAddresses, homeRoot });
  const ref = await resolveRef(parsed.url, branch, gitEnv);
  await cloneRemote({
    spec: parsed.url,
    branch: ref.branch,
    destDir: path.join(homeRoot, 'never'),
    deadlineMs: 1000,
    maxBytes: 1,
    gitEnv,
  });
  throw new Error('reached the clone');
}

async function codeOf(run: Promise<never>): Promise<string> {
  return run.then(
    () => 'resolved',
    (error: unknown) => (error as ScanError).code,
  );
}

beforeEach(() => {
  runGit.mockClear();
});

describe('refused with no git process and no connection', () => {
  it.each([
    ['file:///etc', 'SCHEME_NOT_ALLOWED'],
    ['ext::sh -c touch /tmp/x', 'INVALID_REPO_PATH'],
    ['ext::sh', 'INVALID_REPO_PATH'],
    ['ssh://-oProxyCommand=x/y', 'SCHEME_NOT_ALLOWED'],
    ['git://h/x', 'SCHEME_NOT_ALLOWED'],
    ['http://github.com/a/b', 'SCHEME_NOT_ALLOWED'],
    ['--upload-pack=touch', 'INVALID_REPO_PATH'],
    ['-u', 'INVALID_REPO_PATH'],
    ['https://127.0.0.1/a/b', 'PRIVATE_ADDRESS'],
    ['https://169.254.169.254/a/b', 'PRIVATE_ADDRESS'],
    ['https://[::ffff:127.0.0.1]/a/b', 'PRIVATE_ADDRESS'],
    ['https://2130706433/a/b', 'PRIVATE_ADDRESS'],
    ['https://0x7f.1/a/b', 'PRIVATE_ADDRESS'],
    ['https://localhost./a/b', 'PRIVATE_ADDRESS'],
    ['https://user:token@github.com/a/b', 'CREDENTIALS_IN_URL'],
    ['https://evil.example/a/b', 'HOST_NOT_ALLOWED'],
  ])('%s → %s', async (repoPath, code) => {
    const lookup = resolvesTo('140.82.112.3');
    expect(await codeOf(scanAttempt(repoPath, null, STRICT, lookup))).toBe(code);
    expect(lookup).not.toHaveBeenCalled();
    expect(runGit).not.toHaveBeenCalled();
  });

  it('a public name that resolves to 10.0.0.5 → PRIVATE_ADDRESS after the lookup only', async () => {
    const lookup = resolvesTo('10.0.0.5');
    expect(await codeOf(scanAttempt('https://github.com/a/b', null, STRICT, lookup))).toBe('PRIVATE_ADDRESS');
    expect(lookup).toHaveBeenCalledTimes(1);
    expect(runGit).not.toHaveBeenCalled();
  });

  it.each(['-u', '--upload-pack=x', '--upload-pack=touch /tmp/pwned', '-h', 'a..b'])(
    'branch %j → INVALID_BRANCH',
    async (branch) => {
      const lookup = resolvesTo('140.82.112.3');
      expect(await codeOf(scanAttempt('https://github.com/a/b', branch, STRICT, lookup))).toBe('INVALID_BRANCH');
      expect(runGit).not.toHaveBeenCalled();
    },
  );

  it('cloneRemote refuses an option-like branch itself', async () => {
    const parsed = parseRepoPath('https://github.com/a/b');
    if (parsed.kind !== 'remote') throw new Error('not a remote');
    const gitEnv = await createGitEnv(parsed.url, { allowHttp: false, pinnedAddresses: ['140.82.112.3'], homeRoot });
    const clone = cloneRemote({
      spec: parsed.url,
      branch: '--upload-pack=x',
      destDir: path.join(homeRoot, 'never'),
      deadlineMs: 1000,
      maxBytes: 1,
      gitEnv,
    });
    await expect(clone).rejects.toMatchObject({ code: 'INVALID_BRANCH' });
    expect(runGit).not.toHaveBeenCalled();
  });
});
