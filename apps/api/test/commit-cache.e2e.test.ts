// The commit cache through the whole service: a repository on a loopback git server that gains
// commits during the test, scanned through the API with its in-process worker.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGitHttpServer } from '../../../packages/sources/test/remote/helpers/git-http-server.js';
import type { GitHttpServer } from '../../../packages/sources/test/remote/helpers/git-http-server.js';
import { createGrowingRepo } from './support/growing-repo.js';
import type { GrowingRepo } from './support/growing-repo.js';
import { postScan } from './support/scenarios.js';
import { startTestApi } from './support/test-runtime.js';
import type { TestApi } from './support/test-runtime.js';

const run = promisify(execFile);
const TOKEN = `right-${randomUUID()}`;

interface Result {
  scan_id: string;
  commit: string | null;
  cached_from?: string;
  artifacts: Record<string, { url: string; sha256: string }>;
  changes?: { base_commit: string; head_commit: string | null };
}

describe('commit cache: results reused by commit (loopback git server)', () => {
  let base: string;
  let repo: GrowingRepo;
  let server: GitHttpServer;
  /** The same repositories, private: x-access-token:<token> only, as GitHub asks. */
  let privateServer: GitHttpServer;
  let api: TestApi;
  let repoUrl: string;

  const commit = (files: Record<string, string>, message: string): string => repo.commit(files, message);

  beforeAll(async () => {
    base = mkdtempSync(join(tmpdir(), 'reposcan-commit-cache-'));
    repo = createGrowingRepo(base, 'grow');
    const many: Record<string, string> = { 'README.md': '# grow\n' };
    for (let i = 0; i < 40; i++) many[`src/module-${i}.ts`] = `export const value${i} = ${i};\n`.repeat(20);
    commit(many, 'first');
    server = await startGitHttpServer(repo.served);
    privateServer = await startGitHttpServer(repo.served, {
      auth: { username: 'x-access-token', password: TOKEN },
    });
    repoUrl = `${server.origin}/acme/grow`;
    api = await startTestApi({
      GIT_ALLOW_HTTP: 'true',
      GIT_ALLOW_PRIVATE_HOSTS: 'true',
      GIT_ALLOWED_HOSTS: '127.0.0.1',
      SCAN_WAIT_SECONDS: '30',
      SCAN_TTL_HOURS: '24',
    });
  });
  afterAll(async () => {
    await api?.close();
    await Promise.all([server?.close(), privateServer?.close()]);
    rmSync(base, { recursive: true, force: true });
  });

  const scan = async (body: Record<string, unknown>, query = ''): Promise<{ status: number; data: Result }> => {
    const response = await postScan(api, body, query);
    const envelope = (await response.json()) as { data: Result };
    return { status: response.status, data: envelope.data };
  };
  const download = async (scanId: string, format: string): Promise<Buffer> => {
    const response = await fetch(`${api.baseUrl}/v1/download/${scanId}?format=${format}`);
    expect(response.status).toBe(200);
    return Buffer.from(await response.arrayBuffer());
  };
  const metric = async (name: string): Promise<number> => {
    const text = await (await fetch(`${api.baseUrl}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
    return line === undefined ? 0 : Number(line.split(' ').pop());
  };
  const resultFile = (scanId: string, name: string): string => join(api.dataDir, 'scans', scanId, 'result', name);
  /** Makes a finished scan look as if it finished two days ago, for the janitor's expiry. */
  const age = async (scanId: string): Promise<void> => {
    const file = join(api.dataDir, 'scans', scanId, 'state.json');
    const state = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
    const old = new Date(Date.now() - 48 * 3_600_000).toISOString();
    await writeFile(file, JSON.stringify({ ...state, completed_at: old, updated_at: old }));
  };

  it('serves a repeat scan of the same commit from the first one: new scan_id, the same bytes, shared on disk', async () => {
    const first = await scan({ repo_path: repoUrl });
    expect(first.status).toBe(201);
    expect(first.data.cached_from).toBeUndefined();

    const started = performance.now();
    const second = await scan({ repo_path: repoUrl });
    const ms = performance.now() - started;
    const lsStarted = performance.now();
    // Not the fixture's git(): a synchronous child would block the loopback server in this process.
    await run('git', ['ls-remote', `${repoUrl}.git`], { cwd: base });
    const lsMs = performance.now() - lsStarted;
    console.log(
      `commit cache: repeat scan answered in ${ms.toFixed(1)} ms, of which about ${lsMs.toFixed(1)} ms is one git ls-remote to this server`,
    );
    expect(second.status).toBe(201);
    expect(second.data.scan_id).not.toBe(first.data.scan_id);
    expect(second.data.cached_from).toBe(first.data.scan_id);
    expect(second.data.commit).toBe(first.data.commit);
    expect(second.data.artifacts.txt?.url).toBe(`/v1/download/${second.data.scan_id}?format=txt`);
    for (const format of ['txt', 'md', 'json'])
      expect((await download(second.data.scan_id, format)).equals(await download(first.data.scan_id, format))).toBe(
        true,
      );
    const status = (await (await fetch(`${api.baseUrl}/v1/scans/${second.data.scan_id}`)).json()) as {
      data: { state: string; result: Result };
    };
    expect(status.data).toMatchObject({ state: 'completed', result: { cached_from: first.data.scan_id } });
    // One file on the volume, two names.
    const [a, b] = await Promise.all([
      stat(resultFile(first.data.scan_id, 'output.txt')),
      stat(resultFile(second.data.scan_id, 'output.txt')),
    ]);
    expect(b.ino).toBe(a.ino);
    expect(a.nlink).toBe(2);
    expect(await metric('reposcan_scans_reused_total')).toBe(1);
  });

  it('answers 202 with the completed state when the client asked not to wait', async () => {
    const { status, data } = await scan({ repo_path: repoUrl }, '?wait=false');
    expect(status).toBe(202);
    expect(data).toMatchObject({ state: 'completed' });
  });

  it('cache: false forces a fresh scan, and other options are another key', async () => {
    const fresh = await scan({ repo_path: repoUrl, cache: false });
    expect(fresh.status).toBe(201);
    expect(fresh.data.cached_from).toBeUndefined();
    const lite = await scan({ repo_path: repoUrl, lite: true });
    expect(lite.data.cached_from).toBeUndefined();
    expect((await scan({ repo_path: repoUrl, lite: true })).data.cached_from).toBe(lite.data.scan_id);
  });

  it('a new commit is a fresh scan of that commit', async () => {
    const before = await scan({ repo_path: repoUrl });
    expect(before.data.cached_from).toBeDefined();
    const next = commit({ 'src/module-7.ts': 'export const value7 = "changed";\n' }, 'one file');
    const after = await scan({ repo_path: repoUrl });
    expect(after.status).toBe(201);
    expect(after.data.cached_from).toBeUndefined();
    expect(after.data.commit).toBe(next);
    // The API's ls-remote found the new commit; its worker was handed that and did not list again.
    const request = JSON.parse(await readFile(join(api.dataDir, 'scans', after.data.scan_id, 'request.json'), 'utf8'));
    expect(request.source.resolved).toEqual({ branch: 'main', commit: next, subdir: null });
    expect((await download(after.data.scan_id, 'txt')).toString()).toContain('value7 = "changed"');
    expect((await scan({ repo_path: repoUrl })).data.cached_from).toBe(after.data.scan_id);
  });

  it('deleting either of two scans that share artifacts leaves the other downloadable', async () => {
    commit({ 'docs/delete.md': '# delete test\n' }, 'delete test');
    const a = await scan({ repo_path: repoUrl });
    const b = await scan({ repo_path: repoUrl });
    const c = await scan({ repo_path: repoUrl });
    expect([b.data.cached_from, c.data.cached_from]).toEqual([a.data.scan_id, b.data.scan_id]);
    const txt = await download(a.data.scan_id, 'txt');
    expect((await fetch(`${api.baseUrl}/v1/cleanup/${a.data.scan_id}`, { method: 'DELETE' })).status).toBe(200);
    expect((await download(b.data.scan_id, 'txt')).equals(txt)).toBe(true);
    expect((await fetch(`${api.baseUrl}/v1/cleanup/${c.data.scan_id}`, { method: 'DELETE' })).status).toBe(200);
    expect((await download(b.data.scan_id, 'txt')).equals(txt)).toBe(true);
    expect((await stat(resultFile(b.data.scan_id, 'output.txt'))).nlink).toBe(1);
    // The index pointed at the deleted newest scan: stale, so the next one is fresh.
    const d = await scan({ repo_path: repoUrl });
    expect(d.data.cached_from).toBeUndefined();
  });

  it("expiry of the older scan keeps the newer one's bytes; the last one's expiry frees them", async () => {
    commit({ 'docs/expiry.md': '# expiry test\n' }, 'expiry test');
    const older = await scan({ repo_path: repoUrl });
    const newer = await scan({ repo_path: repoUrl });
    expect(newer.data.cached_from).toBe(older.data.scan_id);
    const txt = await download(newer.data.scan_id, 'txt');
    await age(older.data.scan_id);
    expect((await api.runtime.janitor.sweep()).expired).toBeGreaterThanOrEqual(1);
    expect((await fetch(`${api.baseUrl}/v1/scans/${older.data.scan_id}`)).status).toBe(404);
    expect((await download(newer.data.scan_id, 'txt')).equals(txt)).toBe(true);
    expect((await stat(resultFile(newer.data.scan_id, 'output.txt'))).nlink).toBe(1);
    // The index followed the newest scan, so it still serves.
    const again = await scan({ repo_path: repoUrl });
    expect(again.data.cached_from).toBe(newer.data.scan_id);
    for (const id of [newer.data.scan_id, again.data.scan_id]) await age(id);
    const sweep = await api.runtime.janitor.sweep();
    expect(sweep.staleCacheEntries).toBeGreaterThanOrEqual(1);
    expect((await fetch(`${api.baseUrl}/v1/scans/${newer.data.scan_id}`)).status).toBe(404);
    expect((await scan({ repo_path: repoUrl })).data.cached_from).toBeUndefined();
  });

  it('serves a private repository only to a request whose token can read it', async () => {
    const url = `${privateServer.origin}/acme/grow`;
    const first = await scan({ repo_path: url, git_token: TOKEN });
    expect(first.status).toBe(201);
    const again = await scan({ repo_path: url, git_token: TOKEN });
    expect(again.data.cached_from).toBe(first.data.scan_id);
    // Without a token, or with a wrong one, the ls-remote fails: no reuse, the scan runs and fails as ever.
    for (const body of [{ repo_path: url }, { repo_path: url, git_token: 'wrong-token' }]) {
      const response = await postScan(api, body);
      const envelope = (await response.json()) as { code: string; data: Result };
      expect(response.status).toBe(422);
      expect(envelope.code).toBe('REPO_AUTH_FAILED');
    }
  });

  it('serves a change digest against a branch only while that branch still names the same commit', async () => {
    const bare = join(repo.served, 'acme', 'grow.git');
    const moveBranch = (to: string) => run('git', ['--git-dir', bare, 'update-ref', 'refs/heads/digest-base', to]);
    const baseCommit = commit({ 'docs/digest-a.md': '# a\n' }, 'digest base');
    await moveBranch(baseCommit);
    const head = commit({ 'docs/digest-b.md': '# b\n' }, 'digest head');
    const first = await scan({ repo_path: repoUrl, base_ref: 'digest-base' });
    expect(first.status).toBe(201);
    expect(first.data.changes).toMatchObject({ base_commit: baseCommit, head_commit: head });
    expect((await scan({ repo_path: repoUrl, base_ref: 'digest-base' })).data.cached_from).toBe(first.data.scan_id);
    // The base branch moves on to the head; the head stays: the digest is another one now (empty).
    await moveBranch(head);
    const moved = await scan({ repo_path: repoUrl, base_ref: 'digest-base' });
    expect(moved.status).toBe(201);
    expect(moved.data.cached_from).toBeUndefined();
    expect(moved.data.changes).toMatchObject({ base_commit: head, head_commit: head });
  });

  it('never serves a local path from the cache', async () => {
    const first = await scan({ repo_path: api.repoDir });
    const second = await scan({ repo_path: api.repoDir });
    expect([first.status, second.status]).toEqual([201, 201]);
    expect(first.data.cached_from).toBeUndefined();
    expect(second.data.cached_from).toBeUndefined();
  });
});
