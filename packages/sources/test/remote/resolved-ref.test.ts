import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareSource } from '../../src/prepare-source.js';
import type { PrepareContext } from '../../src/prepare-source.js';
import { createFixtures } from './helpers/fixture-repos.js';
import type { Fixtures } from './helpers/fixture-repos.js';
import { startGitHttpServer } from './helpers/git-http-server.js';
import { loopbackSourceSettings } from './helpers/loopback-settings.js';
import type { GitHttpServer } from './helpers/git-http-server.js';

// A ref resolved moments before (the API's ls-remote, handed on with the request) is cloned as it
// is: the worker does not list the remote again. Real git against a loopback server.

let fixtures: Fixtures;
let server: GitHttpServer;
let work: string;

beforeAll(async () => {
  fixtures = createFixtures();
  server = await startGitHttpServer(fixtures.projectRoot);
  work = mkdtempSync(path.join(os.tmpdir(), 'reposcan-resolved-ref-'));
});

afterAll(async () => {
  await server.close();
  fixtures.cleanup();
  rmSync(work, { recursive: true, force: true });
});

/** The widgets repository prepared with `extra`, and how many times git listed its refs meanwhile. */
async function prepared(extra: Partial<PrepareContext>) {
  const workDir = path.join(work, randomUUID());
  mkdirSync(workDir);
  const before = server.requests.length;
  const result = await prepareSource(
    { type: 'remote', repo_path: `${server.origin}/acme/widgets`, branch: null },
    {
      workDir,
      uploadPath: null,
      settings: loopbackSourceSettings(),
      signal: new AbortController().signal,
      onPhase: () => {},
      ...extra,
    },
  );
  const listings = server.requests.slice(before).filter((request) => request.includes('/info/refs?')).length;
  return { result, listings };
}

describe('a remote source with its ref resolved already', () => {
  it('is cloned at that ref with one listing of the remote (the clone’s), not two', async () => {
    const plain = await prepared({});
    expect(plain.result.source).toMatchObject({ branch: 'trunk', commit: fixtures.commits.trunk });
    expect(plain.listings).toBe(2);

    const handed = await prepared({ resolvedRef: { branch: 'dev', commit: fixtures.commits.dev, subdir: null } });
    expect(handed.result.source).toMatchObject({ branch: 'dev', commit: fixtures.commits.dev });
    expect(existsSync(path.join(handed.result.root, 'DEV.md'))).toBe(true);
    expect(handed.listings).toBe(1);
  });

  it('still refuses a branch name git would take for an option', async () => {
    await expect(
      prepared({ resolvedRef: { branch: '--upload-pack=touch', commit: fixtures.commits.dev, subdir: null } }),
    ).rejects.toMatchObject({ code: 'INVALID_BRANCH' });
  });
});
