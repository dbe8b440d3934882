import { randomUUID } from 'node:crypto';
import type { LookupAddress } from 'node:dns';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ScanError } from '@reposcan/contracts';
import { pathBytesOf } from '@reposcan/core/path-bytes';
import {
  buildWebSource,
  checkRemotePolicy,
  CloneBlobs,
  cloneRemote,
  createGitEnv,
  parseRepoPath,
  resolveRef,
} from '../../src/remote/index.js';
import type {
  CloneListing,
  CloneRemoteOptions,
  GitEnv,
  RemotePolicy,
  RemoteSpec,
  ResolvedRef,
} from '../../src/remote/index.js';
import {
  commitFiles,
  createFixtures,
  EXACT_LINKS,
  EXACT_SUBMODULES,
  git,
  LFS_POINTER,
  RAW_NAMES,
  serveWithFilters,
  takesRawNames,
} from './helpers/fixture-repos.js';
import type { Fixtures } from './helpers/fixture-repos.js';
import { startBlackHoleServer, startGitHttpServer } from './helpers/git-http-server.js';
import type { BlackHoleServer, GitHttpServer } from './helpers/git-http-server.js';
import { processesMentioning } from './helpers/processes.js';

// Real git against a loopback smart-HTTP server. http and private addresses are allowed for
// these tests only, through the policy argument.

const LOOPBACK: RemotePolicy = { allowedHosts: '*', allowHttp: true, allowPrivateHosts: true };
const GIB = 1024 ** 3;

let fixtures: Fixtures;
let server: GitHttpServer;
let canary: GitHttpServer;
let redirecting: GitHttpServer;
let slow: GitHttpServer;
let blackHole: BlackHoleServer;
let work: string;

beforeAll(async () => {
  fixtures = createFixtures();
  server = await startGitHttpServer(fixtures.projectRoot);
  canary = await startGitHttpServer(fixtures.projectRoot);
  redirecting = await startGitHttpServer(fixtures.projectRoot, { redirects: { '/moved/': `${canary.origin}/acme/` } });
  slow = await startGitHttpServer(fixtures.projectRoot, { bytesPerSecond: 512 * 1024 });
  blackHole = await startBlackHoleServer();
  work = mkdtempSync(path.join(os.tmpdir(), 'reposcan-clone-test-'));
});

afterAll(async () => {
  await Promise.all([server.close(), canary.close(), redirecting.close(), slow.close(), blackHole.close()]);
  fixtures.cleanup();
  rmSync(work, { recursive: true, force: true });
});

interface Prepared {
  spec: RemoteSpec;
  gitEnv: GitEnv;
}

async function prepare(
  url: string,
  lookup?: (host: string, options: { all: true }) => Promise<LookupAddress[]>,
): Promise<Prepared> {
  const parsed = parseRepoPath(url);
  if (parsed.kind !== 'remote') throw new Error('not a remote');
  const pinnedAddresses = await checkRemotePolicy(parsed.url, LOOPBACK, lookup ? { lookup } : undefined);
  const gitEnv = await createGitEnv(parsed.url, { allowHttp: true, pinnedAddresses, homeRoot: work });
  return { spec: parsed.url, gitEnv };
}

function destination(): string {
  return path.join(work, randomUUID(), 'repo');
}

/** A repository of `files` (one commit on `branch`) served as `acme/<name>`, with filters as a host serves it; its bare folder. */
function serveRepo(name: string, branch: string, files: Record<string, string>): string {
  const source = path.join(work, `${name}-${randomUUID()}`);
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(source, file)), { recursive: true });
    writeFileSync(pathBytesOf(path.join(source, file)), text);
  }
  git(source, 'init', '-q', '-b', branch);
  git(source, 'add', '-A');
  git(source, 'commit', '-q', '-m', 'first');
  const bare = path.join(fixtures.projectRoot, 'acme', `${name}.git`);
  git(fixtures.projectRoot, 'clone', '-q', '--bare', source, bare);
  serveWithFilters(bare);
  return bare;
}

async function resolveAndClone(url: string, branch: string | null = null) {
  const { spec, gitEnv } = await prepare(url);
  const ref: ResolvedRef = await resolveRef(spec, branch, gitEnv);
  const destDir = destination();
  const cloned = await cloneRemote({
    spec,
    branch: ref.branch,
    subdir: ref.subdir,
    destDir,
    deadlineMs: 30_000,
    maxBytes: GIB,
    gitEnv,
  });
  return { spec, ref, destDir, cloned };
}

async function failure(promise: Promise<unknown>): Promise<ScanError> {
  return promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (error: unknown) => error as ScanError,
  );
}

describe('resolveRef + cloneRemote against a loopback git server', () => {
  it("clones the remote's default branch (trunk) and reports branch and commit", async () => {
    const { spec, destDir, cloned } = await resolveAndClone(`${server.origin}/acme/widgets.git`);
    expect(cloned).toEqual({
      branch: 'trunk',
      commit: fixtures.commits.trunk,
      subdir: null,
      root: destDir,
      skips: new Map([
        ['leak', 'symlink'],
        ['vendor/lib', 'submodule'],
      ]),
      // The commit's whole tree, links and submodules too.
      tracked: ['.gitattributes', '.gitmodules', 'README.md', 'leak', 'model.bin', 'src/app.ts', 'vendor/lib'],
      // Regular files only.
      blobs: expect.any(Map),
      absent: new Map(),
      inStore: new Map(),
    });
    expect([...cloned.blobs.keys()]).toEqual(['.gitattributes', '.gitmodules', 'README.md', 'model.bin', 'src/app.ts']);
    expect(readFileSync(path.join(destDir, 'src/app.ts'), 'utf8')).toBe('export const app = 1;\n');
    expect(buildWebSource(spec, cloned.branch, cloned.commit, cloned.subdir)).toEqual({
      type: 'remote',
      url: `${server.origin}/acme/widgets`,
      hostFamily: 'github',
      ref: fixtures.commits.trunk,
      branch: 'trunk',
      commit: fixtures.commits.trunk,
      subdir: null,
    });
  });

  it('clones the branch named in the request', async () => {
    const { destDir, cloned } = await resolveAndClone(`${server.origin}/acme/widgets`, 'dev');
    expect(cloned).toMatchObject({ branch: 'dev', commit: fixtures.commits.dev });
    expect(existsSync(path.join(destDir, 'DEV.md'))).toBe(true);
    // Names that are not UTF-8 are tracked by their bytes, as the walk finds them on disk.
    for (const name of RAW_NAMES) {
      expect(cloned.tracked).toContain(name);
      expect(existsSync(Buffer.concat([Buffer.from(`${destDir}/`), pathBytesOf(name)]))).toBe(true);
    }
  });

  it("lets the request's branch win over the URL's ref", async () => {
    const { cloned } = await resolveAndClone(`${server.origin}/acme/widgets/tree/feature/x`, 'dev');
    expect(cloned).toMatchObject({ branch: 'dev', commit: fixtures.commits.dev, subdir: null });
  });

  it('resolves /tree/feature/x/docs/guide by the longest ref and checks out only that folder', async () => {
    const { ref, destDir, cloned } = await resolveAndClone(`${server.origin}/acme/widgets/tree/feature/x/docs/guide`);
    expect(ref).toEqual({ branch: 'feature/x', commit: fixtures.commits['feature/x'], subdir: 'docs/guide' });
    expect(cloned).toEqual({
      branch: 'feature/x',
      commit: fixtures.commits['feature/x'],
      subdir: 'docs/guide',
      root: path.join(destDir, 'docs/guide'),
      skips: new Map([
        ['leak', 'symlink'],
        ['vendor/lib', 'submodule'],
      ]),
      // The whole tree, though only the folder is checked out.
      tracked: [
        '.gitattributes',
        '.gitmodules',
        'README.md',
        'docs/guide/a.md',
        'docs/other/b.md',
        'leak',
        'model.bin',
        'packages/app/index.ts',
        'src/app.ts',
        'vendor/lib',
      ],
      blobs: expect.any(Map),
      absent: new Map(),
      inStore: new Map(),
    });
    expect(readFileSync(path.join(cloned.root, 'a.md'), 'utf8')).toBe('# guide\n');
    expect(existsSync(path.join(destDir, 'docs/other/b.md'))).toBe(false);
    expect(existsSync(path.join(destDir, 'packages/app/index.ts'))).toBe(false);
  });

  it('scans the folder of a /blob/ link, and clones a tag when the longest match is one', async () => {
    const blob = await resolveAndClone(`${server.origin}/acme/widgets/blob/feature/x/docs/guide/a.md`);
    expect(blob.cloned).toMatchObject({ branch: 'feature/x', subdir: 'docs/guide' });
    const tag = await resolveAndClone(`${server.origin}/acme/widgets/tree/feature/src`);
    expect(tag.cloned).toMatchObject({ branch: 'feature', commit: fixtures.commits.trunk, subdir: 'src' });
  });

  it('scans the folder of a file that a /tree/ (or Bitbucket /src/) link names', async () => {
    const nested = await resolveAndClone(`${server.origin}/acme/widgets/tree/feature/x/docs/guide/a.md`);
    expect(nested.cloned).toMatchObject({
      branch: 'feature/x',
      subdir: 'docs/guide',
      root: path.join(nested.destDir, 'docs/guide'),
    });
    const atRoot = await resolveAndClone(`${server.origin}/acme/widgets/tree/trunk/README.md`);
    expect(atRoot.cloned).toMatchObject({ branch: 'trunk', subdir: null, root: atRoot.destDir });
    expect(existsSync(path.join(atRoot.destDir, 'src/app.ts'))).toBe(true);
  });

  it('fails with SUBDIR_NOT_FOUND when the folder in the URL does not exist', async () => {
    const { spec, gitEnv } = await prepare(`${server.origin}/acme/widgets/tree/trunk/nowhere`);
    const ref = await resolveRef(spec, null, gitEnv);
    const destDir = destination();
    const clone = cloneRemote({
      spec,
      branch: ref.branch,
      subdir: ref.subdir,
      destDir,
      deadlineMs: 30_000,
      maxBytes: GIB,
      gitEnv,
    });
    expect(await failure(clone)).toMatchObject({ code: 'SUBDIR_NOT_FOUND' });
    expect(existsSync(destDir)).toBe(false);
  });

  it('fails with BRANCH_NOT_FOUND for an unknown branch, before and during the clone', async () => {
    const { spec, gitEnv } = await prepare(`${server.origin}/acme/widgets`);
    expect(await failure(resolveRef(spec, 'nope', gitEnv))).toMatchObject({
      code: 'BRANCH_NOT_FOUND',
      retryable: false,
    });
    const destDir = destination();
    const clone = cloneRemote({ spec, branch: 'ghost', destDir, deadlineMs: 30_000, maxBytes: GIB, gitEnv });
    expect(await failure(clone)).toMatchObject({ code: 'BRANCH_NOT_FOUND', retryable: false });
    expect(existsSync(destDir)).toBe(false);
  });

  it('fails with REPO_NOT_FOUND for an unknown repository', async () => {
    const { spec, gitEnv } = await prepare(`${server.origin}/acme/missing`);
    expect(await failure(resolveRef(spec, null, gitEnv))).toMatchObject({ code: 'REPO_NOT_FOUND', retryable: false });
  });

  it('does not follow a redirect to another server', async () => {
    const { spec, gitEnv } = await prepare(`${redirecting.origin}/moved/widgets`);
    const error = await failure(resolveRef(spec, null, gitEnv));
    expect(error).toMatchObject({ code: 'CLONE_REDIRECT_BLOCKED', retryable: false });
    expect(error.message).toMatch(/redirect/);
    expect(redirecting.requests).toEqual(['/moved/widgets.git/info/refs?service=git-upload-pack']);
    expect(canary.requests).toEqual([]);
  });

  it('checks out symlinks as small files, leaves submodules and LFS objects unfetched, installs no hooks', async () => {
    const { destDir, cloned } = await resolveAndClone(`${server.origin}/acme/widgets`);
    // Named, so the scan skips them: the walk cannot tell these from files and folders.
    expect(cloned.skips).toEqual(
      new Map([
        ['leak', 'symlink'],
        ['vendor/lib', 'submodule'],
      ]),
    );
    const leak = lstatSync(path.join(destDir, 'leak'));
    expect(leak.isSymbolicLink()).toBe(false);
    expect(leak.isFile()).toBe(true);
    expect(readFileSync(path.join(destDir, 'leak'), 'utf8')).toBe('/etc/passwd');
    expect(readdirSync(path.join(destDir, 'vendor/lib'))).toEqual([]);
    expect(existsSync(path.join(destDir, '.git/modules'))).toBe(false);
    expect(readFileSync(path.join(destDir, 'model.bin'), 'utf8')).toBe(LFS_POINTER);
    expect(existsSync(path.join(destDir, '.git/hooks'))).toBe(false);
    expect(readFileSync(path.join(destDir, '.git/config'), 'utf8')).toMatch(/symlinks = false/);
  });

  it('connects to the pinned address, not to whatever the name resolves to later', async () => {
    // `.test` names never resolve: the clone only works through http.curloptResolve.
    const url = `http://git.reposcan.test:${server.port}/acme/widgets`;
    const { spec, gitEnv } = await prepare(url, () => Promise.resolve([{ address: '127.0.0.1', family: 4 }]));
    expect(gitEnv.config).toEqual([`http.curloptResolve=git.reposcan.test:${server.port}:127.0.0.1`]);
    const ref = await resolveRef(spec, null, gitEnv);
    const cloned = await cloneRemote({
      spec,
      branch: ref.branch,
      destDir: destination(),
      deadlineMs: 30_000,
      maxBytes: GIB,
      gitEnv,
    });
    expect(cloned.commit).toBe(fixtures.commits.trunk);
  });
});

describe('whole-repository clones leave blobs over maxBlobBytes on the server', () => {
  const MiB = 1024 * 1024;

  it('writes a sparse placeholder one byte over the limit for the 2 MB blob, which is never downloaded', async () => {
    const { spec, gitEnv } = await prepare(`${server.origin}/acme/big.git`);
    const destDir = destination();
    const before = server.requests.length;
    const cloned = await cloneRemote({
      spec,
      branch: 'main',
      destDir,
      deadlineMs: 30_000,
      maxBytes: GIB,
      gitEnv,
      maxBlobBytes: MiB,
    });
    expect(cloned.root).toBe(destDir);
    const placeholder = lstatSync(path.join(destDir, 'blob.dat'));
    expect(placeholder.size).toBe(MiB + 1);
    expect(placeholder.blocks).toBe(0);
    expect(duBytes(path.join(destDir, '.git'))).toBeLessThan(MiB);
    // Protocol v2: the advertisement, ls-refs and one fetch. A lazy fetch of the missing blob
    // after the clone would be one more request.
    expect(server.requests.slice(before)).toEqual([
      '/acme/big.git/info/refs?service=git-upload-pack',
      '/acme/big.git/git-upload-pack',
      '/acme/big.git/git-upload-pack',
    ]);
  });

  it('so a repository whose one big blob exceeds maxBytes still clones', async () => {
    const { spec, gitEnv } = await prepare(`${server.origin}/acme/big.git`);
    await expect(
      cloneRemote({
        spec,
        branch: 'main',
        destDir: destination(),
        deadlineMs: 30_000,
        maxBytes: MiB,
        gitEnv,
        maxBlobBytes: 512 * 1024,
      }),
    ).resolves.toMatchObject({ branch: 'main' });
  });

  it('writes every other file as a plain clone does: small blobs, symlinks as text, the LFS pointer', async () => {
    const { spec, gitEnv } = await prepare(`${server.origin}/acme/widgets`);
    const destDir = destination();
    await cloneRemote({ spec, branch: 'trunk', destDir, deadlineMs: 30_000, maxBytes: GIB, gitEnv, maxBlobBytes: MiB });
    expect(readFileSync(path.join(destDir, 'src/app.ts'), 'utf8')).toBe('export const app = 1;\n');
    expect(readFileSync(path.join(destDir, 'leak'), 'utf8')).toBe('/etc/passwd');
    expect(readFileSync(path.join(destDir, 'model.bin'), 'utf8')).toBe(LFS_POINTER);
  });

  it('fetches everything from a server without filter support, with no placeholder', async () => {
    const bare = path.join(fixtures.projectRoot, 'acme', 'big-nofilter.git');
    git(fixtures.projectRoot, 'clone', '-q', '--bare', path.join(fixtures.projectRoot, 'acme', 'big.git'), bare);
    const { spec, gitEnv } = await prepare(`${server.origin}/acme/big-nofilter.git`);
    const destDir = destination();
    await cloneRemote({ spec, branch: 'main', destDir, deadlineMs: 30_000, maxBytes: GIB, gitEnv, maxBlobBytes: MiB });
    const blob = lstatSync(path.join(destDir, 'blob.dat'));
    expect(blob.size).toBe(2 * MiB);
    expect(blob.blocks * 512).toBeGreaterThanOrEqual(2 * MiB);
  });
});

describe("a clone's files are the commit's blobs, byte for byte", () => {
  const expectedSkips = new Map<string, string>([
    ...Object.keys(EXACT_LINKS).map((link): [string, string] => [link, 'symlink']),
    ...EXACT_SUBMODULES.map((sub): [string, string] => [sub, 'submodule']),
  ]);

  // The ways a clone is checked out: all blobs, blobs under a size limit, one folder, the blobs an
  // earlier scan did not process (here: none it did); the last two also with the files the scan
  // reads kept in the object store, read from there.
  it.each([
    ['a plain clone', '', undefined, false, false],
    ['a clone that leaves large blobs on the server', '', 1024 * 1024, false, false],
    ['a folder clone', '/tree/main/docs', undefined, false, false],
    ['a rescan clone', '', 1024 * 1024, true, false],
    ['a clone that keeps files in its store', '', 1024 * 1024, false, true],
    ['a rescan clone that keeps files in its store', '', 1024 * 1024, true, true],
  ])(
    '%s, whatever .gitattributes asks for, and names the links and submodules',
    async (_name, folder, maxBlobBytes, rescan, keepInStore) => {
      const { spec, gitEnv } = await prepare(`${server.origin}/acme/exact${folder}`);
      const ref = await resolveRef(spec, null, gitEnv);
      const destDir = destination();
      const cloned = await cloneRemote({
        spec,
        branch: ref.branch,
        subdir: ref.subdir,
        destDir,
        deadlineMs: 30_000,
        maxBytes: GIB,
        gitEnv,
        ...(maxBlobBytes ? { maxBlobBytes } : {}),
        ...(rescan ? { leaveOnServer: () => Promise.resolve(new Map<string, number>()) } : {}),
        keepInStore,
      });
      expect(cloned.commit).toBe(fixtures.exact.commit);
      const blobs = commitFiles(fixtures.exact.bare, fixtures.exact.commit);
      const checkedOut = [...blobs.keys()].filter(
        (file) => cloned.subdir === null || file.startsWith(`${cloned.subdir}/`),
      );
      expect(checkedOut.length).toBeGreaterThan(0);
      const store = new CloneBlobs(cloned.inStore, destDir, gitEnv, new AbortController().signal);
      const inStore = checkedOut.filter((file) => cloned.inStore.has(file));
      const fromStore = await store.read(
        inStore.map((file) => ({ path: file })),
        Number.POSITIVE_INFINITY,
      );
      await store.close();
      const read = new Map(
        inStore.map((file, i) => {
          const outcome = fromStore[i];
          return [file, outcome?.ok ? Buffer.from(outcome.bytes) : outcome];
        }),
      );
      // Kept in the store: every regular file but the ignore files, which the walk reads from disk.
      expect(inStore.length).toBe(keepInStore ? checkedOut.filter((file) => !file.endsWith('.gitignore')).length : 0);
      for (const file of checkedOut) {
        expect(existsSync(path.join(destDir, file))).toBe(!read.has(file));
        const bytes = read.get(file) ?? readFileSync(path.join(destDir, file));
        expect({ file, bytes }).toEqual({ file, bytes: blobs.get(file) });
      }
      expect(cloned.skips).toEqual(expectedSkips);
      // Links and submodules are written out as a plain clone writes them, for the walk to list.
      if (cloned.subdir === null)
        for (const entry of [...Object.keys(EXACT_LINKS), ...EXACT_SUBMODULES])
          expect({ entry, written: existsSync(path.join(destDir, entry)) }).toEqual({ entry, written: true });
    },
  );
});

/** Disk use of a folder, in bytes (allocated blocks, like du). */
function duBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) total += lstatSync(path.join(entry.parentPath, entry.name)).blocks * 512;
  }
  return total;
}

describe('deadlines, size limit and cancellation kill the whole git process group', () => {
  it('ls-remote against a server that never answers → CLONE_TIMEOUT in time, no git left', async () => {
    const marker = `hole-${randomUUID()}`;
    const { spec, gitEnv } = await prepare(`${blackHole.origin}/${marker}/repo`);
    const started = Date.now();
    const error = await failure(resolveRef(spec, null, gitEnv, { timeoutMs: 1500 }));
    expect(error.code).toBe('CLONE_TIMEOUT');
    expect(Date.now() - started).toBeLessThan(2500);
    expect(processesMentioning(marker)).toEqual([]);
  });

  it('clone against a server that never answers → CLONE_TIMEOUT in time, no git left, nothing on disk', async () => {
    const marker = `hole-${randomUUID()}`;
    const { spec, gitEnv } = await prepare(`${blackHole.origin}/${marker}/repo`);
    const destDir = destination();
    const started = Date.now();
    const error = await failure(
      cloneRemote({ spec, branch: 'main', destDir, deadlineMs: 1500, maxBytes: GIB, gitEnv }),
    );
    expect(error.code).toBe('CLONE_TIMEOUT');
    expect(Date.now() - started).toBeLessThan(2500);
    expect(processesMentioning(marker)).toEqual([]);
    expect(existsSync(destDir)).toBe(false);
  });

  it('a server that accepts and never answers, or stops sending, is given up on after the stall time, without a retry', async () => {
    const marker = `hole-${randomUUID()}`;
    const hole = await prepare(`${blackHole.origin}/${marker}/repo`);
    const stalling = { ...hole.gitEnv, env: { ...hole.gitEnv.env } };
    const quick = await createGitEnv(hole.spec, {
      allowHttp: true,
      pinnedAddresses: ['127.0.0.1'],
      homeRoot: work,
      stallSeconds: 1,
    });
    expect(quick.env).toMatchObject({ GIT_HTTP_LOW_SPEED_LIMIT: '1024', GIT_HTTP_LOW_SPEED_TIME: '1' });
    expect(stalling.env.GIT_HTTP_LOW_SPEED_TIME).toBe('30');
    // The wall-clock deadlines are far away: only the stall can end these.
    const silent = await failure(resolveRef(hole.spec, null, quick, { timeoutMs: 60_000 }));
    expect(silent).toMatchObject({
      code: 'CLONE_TIMEOUT',
      retryable: false,
      message: expect.stringMatching(/stopped sending data/),
    });
    expect(processesMentioning(marker)).toEqual([]);

    const trickle = await startGitHttpServer(fixtures.projectRoot, { bytesPerSecond: 200 });
    try {
      const slowly = await prepare(`${trickle.origin}/acme/big.git`);
      const env = await createGitEnv(slowly.spec, {
        allowHttp: true,
        pinnedAddresses: ['127.0.0.1'],
        homeRoot: work,
        stallSeconds: 1,
      });
      const destDir = destination();
      const stalled = await failure(
        cloneRemote({ spec: slowly.spec, branch: 'main', destDir, deadlineMs: 60_000, maxBytes: GIB, gitEnv: env }),
      );
      expect(stalled).toMatchObject({ code: 'CLONE_TIMEOUT', retryable: false });
      expect(existsSync(destDir)).toBe(false);
    } finally {
      await trickle.close();
    }
  });

  it("the caller's signal cancels a clone the same way", async () => {
    const marker = `hole-${randomUUID()}`;
    const { spec, gitEnv } = await prepare(`${blackHole.origin}/${marker}/repo`);
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('cancelled by test')), 300);
    const clone = cloneRemote({
      spec,
      branch: 'main',
      destDir: destination(),
      deadlineMs: 30_000,
      maxBytes: GIB,
      gitEnv,
      signal: controller.signal,
    });
    await expect(clone).rejects.toThrow('cancelled by test');
    expect(processesMentioning(marker)).toEqual([]);
  });

  it('stops a clone that grows past maxBytes on disk → REPO_TOO_LARGE, no git left, nothing on disk', async () => {
    // 2 MiB of random data at 512 KiB/s: the watchdog must stop it long before it finishes.
    const { spec, gitEnv } = await prepare(`${slow.origin}/acme/big.git`);
    const destDir = destination();
    const started = Date.now();
    const error = await failure(
      cloneRemote({ spec, branch: 'main', destDir, deadlineMs: 30_000, maxBytes: 256 * 1024, gitEnv }),
    );
    expect(error).toMatchObject({ code: 'REPO_TOO_LARGE', retryable: false });
    expect(Date.now() - started).toBeLessThan(3000);
    expect(processesMentioning(`${slow.origin}/acme/big.git`)).toEqual([]);
    expect(existsSync(destDir)).toBe(false);
  });

  it('also refuses a clone that finished over the limit between two polls', async () => {
    const { spec, gitEnv } = await prepare(`${server.origin}/acme/big.git`);
    const destDir = destination();
    const error = await failure(
      cloneRemote({ spec, branch: 'main', destDir, deadlineMs: 30_000, maxBytes: 1024 * 1024, gitEnv }),
    );
    expect(error.code).toBe('REPO_TOO_LARGE');
    expect(existsSync(destDir)).toBe(false);
  });
});

describe('a clone told which files an earlier scan processed leaves their blobs on the server', () => {
  const widgets = (): string => path.join(fixtures.projectRoot, 'acme', 'widgets.git');
  /** Clones `trunk` of the served repository at `url`, keeping on the server what `leaveOnServer` answers. */
  async function cloneKeeping(url: string, leaveOnServer: CloneRemoteOptions['leaveOnServer']) {
    const { spec, gitEnv } = await prepare(url);
    const destDir = destination();
    const cloned = await cloneRemote({
      spec,
      branch: 'trunk',
      destDir,
      deadlineMs: 30_000,
      maxBytes: GIB,
      gitEnv,
      maxBlobBytes: 1024 * 1024,
      leaveOnServer,
    });
    return { cloned, destDir };
  }

  it('asks with each regular file’s blob id, leaves the answered files off the disk, and fetches the rest at once', async () => {
    const asked: Map<string, string>[] = [];
    const listings: CloneListing[] = [];
    const before = server.requests.length;
    const { cloned, destDir } = await cloneKeeping(`${server.origin}/acme/widgets`, (listing) => {
      asked.push(new Map(listing.blobs));
      listings.push(listing);
      return Promise.resolve(new Map([['src/app.ts', 22]]));
    });
    // The rest of the tree as the clone gives it: every path, and the link and submodule among them.
    expect(listings[0]?.tracked).toEqual(cloned.tracked);
    expect(listings[0]?.skips).toEqual(
      new Map([
        ['leak', 'symlink'],
        ['vendor/lib', 'submodule'],
      ]),
    );
    const appBlob = git(widgets(), 'rev-parse', 'trunk:src/app.ts');
    // Regular files only: no link (`leak`), no submodule (`vendor/lib`).
    expect(asked).toHaveLength(1);
    expect(asked[0]?.get('src/app.ts')).toBe(appBlob);
    expect([...(asked[0]?.keys() ?? [])].sort()).toEqual([
      '.gitattributes',
      '.gitmodules',
      'README.md',
      'model.bin',
      'src/app.ts',
    ]);
    expect(cloned.blobs.get('README.md')).toBe(git(widgets(), 'rev-parse', 'trunk:README.md'));
    expect(existsSync(path.join(destDir, 'src/app.ts'))).toBe(false);
    expect(cloned.absent).toEqual(new Map([['src/app.ts', 22]]));
    expect(git(destDir, 'rev-list', '--objects', '--missing=print', 'HEAD')).toContain(`?${appBlob}`);
    expect(readFileSync(path.join(destDir, 'README.md'), 'utf8')).toBe('# widgets\n');
    expect(readFileSync(path.join(destDir, 'leak'), 'utf8')).toBe('/etc/passwd');
    // The clone (advertisement, ls-refs, fetch of trees) and one fetch of every other blob:
    // git's own lazy fetch would have asked once per file.
    const posts = server.requests.slice(before).filter((request) => request.endsWith('/git-upload-pack'));
    expect(posts.length).toBeLessThanOrEqual(4);
  });

  it('writes every file it is not told to keep when the server ignores the filter and sent every blob', async () => {
    const bare = path.join(fixtures.projectRoot, 'acme', 'widgets-nofilter.git');
    git(fixtures.projectRoot, 'clone', '-q', '--bare', widgets(), bare);
    const { cloned, destDir } = await cloneKeeping(`${server.origin}/acme/widgets-nofilter.git`, () =>
      Promise.resolve(new Map([['src/app.ts', 22]])),
    );
    expect(readFileSync(path.join(destDir, 'README.md'), 'utf8')).toBe('# widgets\n');
    expect(readFileSync(path.join(destDir, 'leak'), 'utf8')).toBe('/etc/passwd');
    // Its blob is in the clone anyway, so it is written, and what is on disk is what the scan reads.
    expect(readFileSync(path.join(destDir, 'src/app.ts'), 'utf8')).toBe('export const app = 1;\n');
    expect(cloned.commit).toBe(git(bare, 'rev-parse', 'trunk'));
  });

  it('fetches the ignore files whatever it answers: the walk reads them', async () => {
    serveRepo('ignores', 'trunk', {
      '.gitignore': 'build/\n',
      'src/.gittxtignore': '*.gen.ts\n',
      'src/app.ts': 'export const app = 1;\n',
    });
    const { cloned, destDir } = await cloneKeeping(`${server.origin}/acme/ignores`, ({ blobs }) =>
      Promise.resolve(new Map([...blobs.keys()].map((file) => [file, 0]))),
    );
    expect(readFileSync(path.join(destDir, '.gitignore'), 'utf8')).toBe('build/\n');
    expect(readFileSync(path.join(destDir, 'src', '.gittxtignore'), 'utf8')).toBe('*.gen.ts\n');
    expect(existsSync(path.join(destDir, 'src', 'app.ts'))).toBe(false);
    expect(cloned.absent).toEqual(new Map([['src/app.ts', 0]]));
  });

  it('asks about files whose names git quotes, by the names the scan gives them', async () => {
    const utf8 = ['docs/naïve notes.md', '日本/読む.md', 'say "hi".txt', 'tab\there.txt'];
    // Shown quoted by the scan (it starts with `"`): kept off the question.
    const unlike = ['"quoted".txt'];
    const names = [...utf8, ...unlike, 'plain.ts'];
    const bare = serveRepo(
      'quoted-names',
      'trunk',
      Object.fromEntries(names.map((name) => [name, `text of ${name}\n`])),
    );
    const asked: string[] = [];
    const { cloned, destDir } = await cloneKeeping(`${server.origin}/acme/quoted-names`, ({ blobs }) => {
      asked.push(...blobs.keys());
      return Promise.resolve(new Map([...utf8, 'plain.ts'].map((file) => [file, 0])));
    });
    expect(asked.sort()).toEqual([...utf8, 'plain.ts'].sort());
    expect(cloned.blobs.get('日本/読む.md')).toBe(git(bare, 'rev-parse', 'trunk:日本/読む.md'));
    // What it was told to keep stays on the server; the rest is on disk, byte for byte.
    expect(cloned.absent).toEqual(new Map([...utf8, 'plain.ts'].map((file) => [file, 0])));
    for (const name of utf8) expect(existsSync(path.join(destDir, name))).toBe(false);
    for (const name of unlike)
      expect(readFileSync(pathBytesOf(path.join(destDir, name)), 'utf8')).toBe(`text of ${name}\n`);
  });

  it.runIf(takesRawNames)('never asks about a file whose name is not UTF-8, and writes it', async () => {
    serveRepo('raw-names', 'trunk', { 'plain.ts': 'export const plain = 1;\n', 'caf\udce9.txt': 'café\n' });
    const asked: string[] = [];
    const { destDir } = await cloneKeeping(`${server.origin}/acme/raw-names`, ({ blobs }) => {
      asked.push(...blobs.keys());
      return Promise.resolve(new Map([['plain.ts', 0]]));
    });
    expect(asked).toEqual(['plain.ts']);
    expect(readFileSync(pathBytesOf(path.join(destDir, 'caf\udce9.txt')), 'utf8')).toBe('café\n');
  });

  it('is not asked for a folder clone, which fetches only its folder anyway', async () => {
    const { spec, gitEnv } = await prepare(`${server.origin}/acme/widgets/tree/trunk/src`);
    const ref = await resolveRef(spec, null, gitEnv);
    let asked = false;
    await cloneRemote({
      spec,
      branch: ref.branch,
      subdir: ref.subdir,
      destDir: destination(),
      deadlineMs: 30_000,
      maxBytes: GIB,
      gitEnv,
      leaveOnServer: () => {
        asked = true;
        return Promise.resolve(new Map());
      },
    });
    expect(asked).toBe(false);
  });
});

describe('the files a clone keeps in its store (CloneBlobs)', () => {
  /** `acme/<name>` (`acme/exact` unless named) cloned with its files left in the object store. */
  async function cloneKeepingInStore(name = 'exact') {
    const { spec, gitEnv } = await prepare(`${server.origin}/acme/${name}`);
    const destDir = destination();
    const cloned = await cloneRemote({
      spec,
      branch: 'main',
      destDir,
      deadlineMs: 30_000,
      maxBytes: GIB,
      gitEnv,
      maxBlobBytes: 1024 * 1024,
      keepInStore: true,
    });
    return { gitEnv, destDir, cloned };
  }

  it('reads any number at once through one git, into the room given, and refuses what is over the limit', async () => {
    const { gitEnv, destDir, cloned } = await cloneKeepingInStore();
    const blobs = commitFiles(fixtures.exact.bare, fixtures.exact.commit);
    const store = new CloneBlobs(cloned.inStore, destDir, gitEnv, new AbortController().signal);
    expect(store.sizes()).toEqual(new Map([...cloned.inStore].map(([file, { size }]) => [file, size])));
    const files = [...cloned.inStore.keys()];
    const room = new Uint8Array(new SharedArrayBuffer(64));
    // Two batches in flight at once, answered in order; one file into the room it is given.
    const [first, second] = await Promise.all([
      store.read([{ path: 'README.md', into: room }, { path: 'not/there.txt' }], Number.POSITIVE_INFINITY),
      store.read(
        files.map((file) => ({ path: file })),
        Number.POSITIVE_INFINITY,
      ),
    ]);
    expect(first[0]).toEqual({ ok: true, bytes: expect.any(Uint8Array) });
    const readme = first[0] as { ok: true; bytes: Uint8Array };
    expect(readme.bytes.buffer).toBe(room.buffer);
    expect(Buffer.from(readme.bytes)).toEqual(blobs.get('README.md'));
    expect(first[1]).toEqual({ ok: false, reason: 'unreadable' });
    files.forEach((file, i) => {
      const outcome = second[i] as { ok: true; bytes: Uint8Array };
      expect({ file, bytes: Buffer.from(outcome.bytes) }).toEqual({ file, bytes: blobs.get(file) });
    });
    const largest = Math.max(...[...cloned.inStore.values()].map(({ size }) => size));
    const big = files.find((file) => cloned.inStore.get(file)?.size === largest) as string;
    expect(await store.read([{ path: big }], largest - 1)).toEqual([{ ok: false, reason: 'too_large' }]);
    // Resolves once git has answered everything and exited.
    await store.close();
  });

  it('ends with its scan: an abort kills git and fails what is asked after it', async () => {
    const { gitEnv, destDir, cloned } = await cloneKeepingInStore();
    const scan = new AbortController();
    const store = new CloneBlobs(cloned.inStore, destDir, gitEnv, scan.signal);
    expect(await store.read([{ path: 'README.md' }], Number.POSITIVE_INFINITY)).toEqual([
      { ok: true, bytes: expect.any(Uint8Array) },
    ]);
    scan.abort(new Error('scan cancelled'));
    await expect(store.read([{ path: 'notes.txt' }], Number.POSITIVE_INFINITY)).rejects.toThrow('scan cancelled');
    // Killed, not left waiting on its stdin, which is still open.
    const running = (): string[] =>
      readdirSync('/proc').filter((pid) => {
        try {
          return /^\d+$/.test(pid) && readlinkSync(`/proc/${pid}/cwd`) === destDir;
        } catch {
          return false;
        }
      });
    for (let waited = 0; running().length > 0 && waited < 5_000; waited += 50)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(running()).toEqual([]);
    // Nothing is left waiting, so closing has nothing to report.
    await expect(store.close()).resolves.toBeUndefined();
  });

  it('keeps files whose names git quotes there too, by the names the scan gives them', async () => {
    const files = { 'ünï/naïve notes.md': '# notes\n', '日本/読む.ts': 'export const 読む = 1;\n', 'plain.ts': 'x\n' };
    serveRepo('quoted-in-store', 'main', { ...files, 'ünï/.gitignore': 'build/\n' });
    const { gitEnv, destDir, cloned } = await cloneKeepingInStore('quoted-in-store');
    expect([...cloned.inStore.keys()].sort()).toEqual(Object.keys(files).sort());
    for (const name of Object.keys(files)) expect(existsSync(path.join(destDir, name))).toBe(false);
    // The walk reads the ignore file, so it is written out, in its folder of a quoted name.
    expect(readFileSync(path.join(destDir, 'ünï/.gitignore'), 'utf8')).toBe('build/\n');
    const store = new CloneBlobs(cloned.inStore, destDir, gitEnv, new AbortController().signal);
    const read = await store.read(
      Object.keys(files).map((file) => ({ path: file })),
      Number.POSITIVE_INFINITY,
    );
    expect(read.map((outcome) => Buffer.from((outcome as { bytes: Uint8Array }).bytes).toString())).toEqual(
      Object.values(files),
    );
    await store.close();
  });
});
