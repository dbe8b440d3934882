// Remote repositories through the whole service: API, queue, worker, hardened git, engine. A
// smart-HTTP git server on loopback stands in for the host, allowed for this test only with
// GIT_ALLOW_HTTP and GIT_ALLOW_PRIVATE_HOSTS; nothing reaches the internet.
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  commitFiles,
  createFixtures,
  EXACT_LINKS,
} from '../../../packages/sources/test/remote/helpers/fixture-repos.js';
import type { Fixtures } from '../../../packages/sources/test/remote/helpers/fixture-repos.js';
import {
  startBlackHoleServer,
  startGitHttpServer,
} from '../../../packages/sources/test/remote/helpers/git-http-server.js';
import type { BlackHoleServer, GitHttpServer } from '../../../packages/sources/test/remote/helpers/git-http-server.js';
import { processesMentioning } from '../../../packages/sources/test/remote/helpers/processes.js';
import { postScan, waitCompleted } from './support/scenarios.js';
import { startTestApi } from './support/test-runtime.js';
import type { TestApi } from './support/test-runtime.js';

/** What lets the API clone from the loopback git servers these tests start. */
const LOOPBACK_GIT = { GIT_ALLOW_HTTP: 'true', GIT_ALLOW_PRIVATE_HOSTS: 'true', GIT_ALLOWED_HOSTS: '127.0.0.1' };

interface Envelope {
  status: string;
  code?: string;
  detail?: string;
  data: Record<string, unknown> & { scan_id?: string };
}

interface ScanResult {
  scan_id: string;
  repo_name: string;
  branch: string | null;
  commit: string | null;
  source: { type: string; url: string | null };
  num_textual_files: number;
}

interface SummaryFile {
  path: string;
  url: string;
}

describe('remote repositories through the API (loopback git server)', () => {
  let fixtures: Fixtures;
  let server: GitHttpServer;
  let redirecting: GitHttpServer;
  let blackHole: BlackHoleServer;
  let api: TestApi;

  beforeAll(async () => {
    fixtures = createFixtures();
    server = await startGitHttpServer(fixtures.projectRoot);
    blackHole = await startBlackHoleServer();
    // Redirects to the real server: git would fetch from wherever it is sent if it followed them.
    redirecting = await startGitHttpServer(fixtures.projectRoot, {
      redirects: { '/moved/': `${server.origin}/acme/` },
    });
    api = await startTestApi({
      ...LOOPBACK_GIT,
      CLONE_TIMEOUT_SECONDS: '3',
      MAX_FILE_BYTES: String(1024 * 1024),
      SCAN_WAIT_SECONDS: '30',
    });
  });
  afterAll(async () => {
    await api?.close();
    await Promise.all([server?.close(), redirecting?.close(), blackHole?.close()]);
    fixtures?.cleanup();
  });

  const scan = async (body: Record<string, unknown>): Promise<{ status: number; body: Envelope }> => {
    const response = await postScan(api, body);
    return { status: response.status, body: (await response.json()) as Envelope };
  };
  const summaryFiles = async (scanId: string): Promise<SummaryFile[]> =>
    ((await (await fetch(`${api.baseUrl}/v1/summary/${scanId}`)).json()) as { data: { files: SummaryFile[] } }).data
      .files;

  it('scans the default branch and reports the branch and commit it scanned', async () => {
    const { status, body } = await scan({ repo_path: `${server.origin}/acme/widgets` });
    expect(status).toBe(201);
    const result = body.data as unknown as ScanResult;
    expect(result).toMatchObject({
      repo_name: 'widgets',
      branch: 'trunk',
      commit: fixtures.commits.trunk,
      source: { type: 'remote', url: `${server.origin}/acme/widgets` },
    });
    const files = await summaryFiles(result.scan_id);
    expect(files.find((f) => f.path === 'src/app.ts')?.url).toBe(
      `${server.origin}/acme/widgets/blob/${fixtures.commits.trunk}/src/app.ts`,
    );
  });

  it('scans the branch named in the body, which wins over a ref in the URL', async () => {
    const { body } = await scan({ repo_path: `${server.origin}/acme/widgets/tree/feature/x`, branch: 'dev' });
    expect(body.data).toMatchObject({ branch: 'dev', commit: fixtures.commits.dev });
  });

  it('scans only the folder of a /tree/<ref-with-slash>/<folder> URL, with repository-relative paths', async () => {
    const { status, body } = await scan({ repo_path: `${server.origin}/acme/widgets/tree/feature/x/docs/guide` });
    expect(status).toBe(201);
    expect(body.data).toMatchObject({ branch: 'feature/x', commit: fixtures.commits['feature/x'] });
    const scanId = String(body.data.scan_id);
    expect((await summaryFiles(scanId)).map((f) => f.path)).toEqual(['docs/guide/a.md']);
    const summary = (await (await fetch(`${api.baseUrl}/v1/summary/${scanId}`)).json()) as {
      data: { repository: { subdir: string } };
    };
    expect(summary.data.repository.subdir).toBe('docs/guide');
  });

  it('skips a symlink to /etc/passwd as symlink and a submodule as submodule, reading neither', async () => {
    const { body } = await scan({ repo_path: `${server.origin}/acme/widgets` });
    const txt = await (await fetch(`${api.baseUrl}/v1/download/${String(body.data.scan_id)}?format=txt`)).text();
    expect(txt).not.toContain('FILE: leak');
    expect(txt).not.toContain('/etc/passwd');
    expect(txt).not.toContain(await readFile('/etc/passwd', 'utf8'));
    const summary = (await (await fetch(`${api.baseUrl}/v1/summary/${String(body.data.scan_id)}`)).json()) as {
      data: { assets: { path: string; size_bytes: number }[]; skipped: { path: string; reason: string }[] };
    };
    expect(summary.data.skipped).toEqual([
      { path: 'leak', reason: 'symlink' },
      { path: 'vendor/lib/', reason: 'submodule' },
    ]);
    // An LFS pointer stays a pointer: the object it names (12 345 bytes) is never fetched.
    expect(summary.data.assets.find((a) => a.path === 'model.bin')?.size_bytes).toBeLessThan(200);
  });

  it("keeps the commit's files that its own .gitignore ignores (committed with git add -f), in a folder scan too", async () => {
    const whole = await scan({ repo_path: `${server.origin}/acme/checked-in` });
    expect(whole.status).toBe(201);
    const scanId = String(whole.body.data.scan_id);
    expect((await summaryFiles(scanId)).map((f) => f.path).sort()).toEqual([
      '.gitignore',
      'dist/app.js',
      'dist/min/app.min.js',
      'notes/debug.log',
      'src/main.ts',
    ]);
    const txt = await (await fetch(`${api.baseUrl}/v1/download/${scanId}?format=txt`)).text();
    expect(txt).toContain('kept on purpose');
    const folder = await scan({ repo_path: `${server.origin}/acme/checked-in/tree/main/dist` });
    expect((await summaryFiles(String(folder.body.data.scan_id))).map((f) => f.path).sort()).toEqual([
      'dist/app.js',
      'dist/min/app.min.js',
    ]);
  });

  describe("files are the commit's blobs, links and submodules are skipped (acme/exact)", () => {
    const skippedInExact = [
      { path: 'abs', reason: 'symlink' },
      { path: 'docs/.gitignore', reason: 'symlink' },
      { path: 'docs/vendored/', reason: 'submodule' },
      { path: 'leak', reason: 'symlink' },
      { path: 'loop', reason: 'symlink' },
      { path: 'sub/', reason: 'submodule' },
      { path: 'up', reason: 'symlink' },
    ];

    it("scans every file with its blob's bytes and size, whatever .gitattributes asks for", async () => {
      const { status, body } = await scan({ repo_path: `${server.origin}/acme/exact` });
      expect(status).toBe(201);
      const scanId = String(body.data.scan_id);
      const blobs = commitFiles(fixtures.exact.bare, fixtures.exact.commit);
      const json = JSON.parse(await (await fetch(`${api.baseUrl}/v1/download/${scanId}?format=json`)).text()) as {
        files: { path: string; size_bytes: number; content: string }[];
        assets: unknown[];
      };
      expect(json.assets).toEqual([]);
      expect(json.files.map((f) => f.path).sort()).toEqual([...blobs.keys()].sort());
      for (const file of json.files) {
        const blob = blobs.get(file.path);
        expect({ path: file.path, size: file.size_bytes, bytes: Buffer.from(file.content, 'utf8') }).toEqual({
          path: file.path,
          size: blob?.length,
          bytes: blob,
        });
      }
      const summary = (await (await fetch(`${api.baseUrl}/v1/summary/${scanId}`)).json()) as {
        data: { files: { path: string; size_bytes: number }[]; skipped: unknown[] };
      };
      expect(summary.data.skipped).toEqual(skippedInExact);
      for (const file of summary.data.files)
        expect({ path: file.path, size: file.size_bytes }).toEqual({
          path: file.path,
          size: blobs.get(file.path)?.length,
        });
    });

    it('never lets a link target into an artifact', async () => {
      const { body } = await scan({ repo_path: `${server.origin}/acme/exact` });
      for (const format of ['txt', 'md', 'json']) {
        const artifact = await (
          await fetch(`${api.baseUrl}/v1/download/${String(body.data.scan_id)}?format=${format}`)
        ).text();
        for (const target of Object.values(EXACT_LINKS))
          expect({ format, target, found: artifact.includes(target) }).toEqual({ format, target, found: false });
      }
    });

    it('skips them in a folder scan too', async () => {
      const { status, body } = await scan({ repo_path: `${server.origin}/acme/exact/tree/main/docs` });
      expect(status).toBe(201);
      const summary = (await (await fetch(`${api.baseUrl}/v1/summary/${String(body.data.scan_id)}`)).json()) as {
        data: { files: { path: string; size_bytes: number }[]; skipped: unknown[] };
      };
      expect(summary.data.files.map((f) => [f.path, f.size_bytes])).toEqual([['docs/guide.md', 8]]);
      expect(summary.data.skipped).toEqual(skippedInExact.filter((entry) => entry.path.startsWith('docs/')));
    });

    it('inspect previews the same files, sizes and skipped paths', async () => {
      type Preview = {
        files: { path: string; size_bytes: number; subcategory: string; tokens_estimate: number }[];
        skipped_count: number;
        repository: { tree_summary: string };
      };
      const preview = async (repoPath: string): Promise<Preview> => {
        const response = await fetch(`${api.baseUrl}/v1/inspect`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ repo_path: repoPath }),
        });
        expect(response.status).toBe(200);
        return ((await response.json()) as Envelope).data as Preview;
      };
      const data = await preview(`${server.origin}/acme/exact`);
      const blobs = commitFiles(fixtures.exact.bare, fixtures.exact.commit);
      expect(Object.fromEntries(data.files.map((f) => [f.path, f.size_bytes]))).toEqual(
        Object.fromEntries([...blobs].map(([path, bytes]) => [path, bytes.length])),
      );
      expect(data.skipped_count).toBe(skippedInExact.length);
      for (const target of Object.values(EXACT_LINKS)) expect(data.repository.tree_summary).not.toContain(target);
      // The files are read from the clone's object store: what each holds is judged as in a
      // folder holding the same files.
      const copy = join(api.localRoot, 'exact-files');
      for (const [path, bytes] of blobs) {
        await mkdir(dirname(join(copy, path)), { recursive: true });
        await writeFile(join(copy, path), bytes);
      }
      const judged = (p: Preview) => p.files.map((f) => [f.path, f.subcategory, f.tokens_estimate]);
      expect(judged(data)).toEqual(judged(await preview(copy)));
    });
  });

  it('leaves a blob over MAX_FILE_BYTES on the server and lists it as too_large', async () => {
    const { status, body } = await scan({ repo_path: `${server.origin}/acme/big` });
    expect(status).toBe(201);
    const summary = (await (await fetch(`${api.baseUrl}/v1/summary/${String(body.data.scan_id)}`)).json()) as {
      data: { skipped: { path: string; reason: string }[] };
    };
    expect(summary.data.skipped).toContainEqual({ path: 'blob.dat', reason: 'too_large' });
  });

  it.each([
    ['an unknown branch', 422, 'BRANCH_NOT_FOUND', { repo_path: 'ORIGIN/acme/widgets', branch: 'no-such-branch' }],
    ['an unknown repository', 422, 'REPO_NOT_FOUND', { repo_path: 'ORIGIN/acme/missing' }],
    [
      'a folder that does not exist',
      422,
      'SUBDIR_NOT_FOUND',
      { repo_path: 'ORIGIN/acme/widgets/tree/trunk/no/such/folder' },
    ],
  ])('%s fails the scan once, answered as %i %s with the scan id', async (_name, status, code, request) => {
    const response = await scan({ ...request, repo_path: String(request.repo_path).replace('ORIGIN', server.origin) });
    expect({ status: response.status, code: response.body.code }).toEqual({ status, code });
    const state = (
      (await (await fetch(`${api.baseUrl}/v1/scans/${String(response.body.data.scan_id)}`)).json()) as Envelope
    ).data;
    expect(state).toMatchObject({ state: 'failed', attempt: 1, error: { code } }); // failed at once, not retried
  });

  it('refuses to follow a redirect: 403 CLONE_REDIRECT_BLOCKED, and the target is never asked', async () => {
    const before = server.requests.length;
    const response = await scan({ repo_path: `${redirecting.origin}/moved/widgets` });
    expect({ status: response.status, code: response.body.code }).toEqual({
      status: 403,
      code: 'CLONE_REDIRECT_BLOCKED',
    });
    expect(server.requests.length).toBe(before);
  });

  it('gives up on a server that never answers: 504 CLONE_TIMEOUT, nothing left in staging', async () => {
    const response = await scan({ repo_path: `${blackHole.origin}/acme/widgets` });
    expect({ status: response.status, code: response.body.code }).toEqual({ status: 504, code: 'CLONE_TIMEOUT' });
    const scanDir = join(api.dataDir, 'scans', String(response.body.data.scan_id));
    expect((await readdir(scanDir)).filter((name) => name.startsWith('work'))).toEqual([]);
  });

  it('previews a remote repository with inspect, leaving nothing under DATA_DIR', async () => {
    const before = await readdir(join(api.dataDir, 'scans'));
    const response = await fetch(`${api.baseUrl}/v1/inspect`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ repo_path: `${server.origin}/acme/widgets/tree/feature/x` }),
    });
    expect(response.status).toBe(200);
    const data = ((await response.json()) as Envelope).data as {
      repository: { branch: string };
      files: { path: string }[];
    };
    expect(data.repository.branch).toBe('feature/x');
    expect(data.files.map((f) => f.path)).toContain('docs/guide/a.md');
    expect(await readdir(join(api.dataDir, 'scans'))).toEqual(before);
  });
});

describe('inspect abandoned by its client', () => {
  it('stops its clone and frees its slot at once, not at the deadline', async () => {
    const blackHole = await startBlackHoleServer();
    // Deadlines far away: only the abandonment can free the slot within this test.
    const api = await startTestApi({
      ...LOOPBACK_GIT,
      CLONE_TIMEOUT_SECONDS: '60',
      INSPECT_TIMEOUT_SECONDS: '60',
    });
    try {
      const inFlight = async (): Promise<number> =>
        Number(/^reposcan_inspect_in_flight (\d+)$/m.exec(await (await fetch(`${api.baseUrl}/metrics`)).text())?.[1]);
      // The second preview runs on the thread the service keeps ready after the first.
      for (const attempt of ['on a new thread', 'on the thread kept ready']) {
        const client = new AbortController();
        const request = fetch(`${api.baseUrl}/v1/inspect`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ repo_path: `${blackHole.origin}/acme/widgets` }),
          signal: client.signal,
        }).catch(() => 'aborted');
        await expect
          .poll(() => processesMentioning(blackHole.origin).length, { timeout: 20_000, interval: 50, message: attempt })
          .toBeGreaterThan(0);
        expect(await inFlight()).toBe(1);
        client.abort();
        expect(await request).toBe('aborted');
        await expect.poll(inFlight, { timeout: 15_000, interval: 100, message: attempt }).toBe(0);
        await expect
          .poll(() => processesMentioning(blackHole.origin), { timeout: 15_000, interval: 100, message: attempt })
          .toEqual([]);
      }
    } finally {
      await api.close();
      await blackHole.close();
    }
  });
});

describe('a preview of a remote that never answers', () => {
  it('ends at INSPECT_TIMEOUT_SECONDS with 504 SCAN_TIMEOUT, whose sentence covers a slow git server', async () => {
    const blackHole = await startBlackHoleServer();
    const api = await startTestApi({
      ...LOOPBACK_GIT,
      CLONE_TIMEOUT_SECONDS: '60',
      INSPECT_TIMEOUT_SECONDS: '1',
    });
    try {
      const response = await fetch(`${api.baseUrl}/v1/inspect`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ repo_path: `${blackHole.origin}/acme/widgets` }),
      });
      expect(response.status).toBe(504);
      expect(await response.json()).toMatchObject({
        code: 'SCAN_TIMEOUT',
        detail: expect.stringMatching(
          /longer than 1 s: .*include_patterns.*git server slow to answer, try again later/,
        ),
      });
    } finally {
      await api.close();
      await blackHole.close();
    }
  });
});

describe('a client whose remotes never answer', () => {
  it("gives them up after the stall time without retries, and does not hold another client's scan behind them", async () => {
    const blackHole = await startBlackHoleServer();
    // One scan at a time, and a wall-clock deadline far away: only the stall cut-off and the
    // queue's fair share can let the other client's scan through early.
    const api = await startTestApi({
      ...LOOPBACK_GIT,
      CLONE_TIMEOUT_SECONDS: '120',
      CLONE_STALL_SECONDS: '1',
      WORKER_CONCURRENCY: '1',
      TRUST_PROXY: 'true',
    });
    try {
      const submit = async (client: string, repoPath: string): Promise<string> => {
        const response = await fetch(`${api.baseUrl}/v1/scan?wait=false`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-forwarded-for': client },
          body: JSON.stringify({ repo_path: repoPath }),
        });
        expect(response.status).toBe(202);
        return ((await response.json()) as { data: { scan_id: string } }).data.scan_id;
      };
      const hanging = [
        await submit('198.51.100.1', `${blackHole.origin}/acme/one`),
        await submit('198.51.100.1', `${blackHole.origin}/acme/two`),
      ];
      const other = await submit('198.51.100.2', api.repoDir);
      const done = await waitCompleted(api, other, 60_000);
      expect(done.state).toBe('completed');
      const second = await waitCompleted(api, hanging[1] as string, 60_000);
      // The other client's scan ran before the second hanging one started.
      expect(Date.parse(String(second.started_at))).toBeGreaterThanOrEqual(Date.parse(String(done.completed_at)));
      for (const scanId of hanging) {
        const failed = await waitCompleted(api, scanId, 60_000);
        expect(failed).toMatchObject({ state: 'failed', attempt: 1, error: { code: 'CLONE_TIMEOUT' } });
      }
      expect(processesMentioning(blackHole.origin)).toEqual([]);
    } finally {
      await api.close();
      await blackHole.close();
    }
  });
});
