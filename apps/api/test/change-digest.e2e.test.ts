// Change digests through the whole service: a repository on a loopback git server gains a commit,
// and a scan with base_ref at the first commit holds only what changed, through the API and its
// in-process worker; a local path, an upload, and base_ref beside parts are refused at submit.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { git } from '../../../packages/sources/test/remote/helpers/fixture-repos.js';
import { startGitHttpServer } from '../../../packages/sources/test/remote/helpers/git-http-server.js';
import type { GitHttpServer } from '../../../packages/sources/test/remote/helpers/git-http-server.js';
import { postScan } from './support/scenarios.js';
import { startTestApi } from './support/test-runtime.js';
import type { TestApi } from './support/test-runtime.js';
import { buildZip } from './support/zips.js';

interface Envelope {
  code?: string;
  detail?: string;
  data: {
    scan_id: string;
    state: string;
    /** A waiting POST answers with the result itself. */
    changes?: { base_commit: string; head_commit: string; counts: Record<string, number> };
  };
}

describe('change digests through the API (loopback git server)', () => {
  let base: string;
  let server: GitHttpServer;
  let api: TestApi;
  let repoUrl: string;
  let first: string;
  let second: string;

  beforeAll(async () => {
    base = mkdtempSync(join(tmpdir(), 'reposcan-change-digest-e2e-'));
    const served = join(base, 'served', 'acme');
    mkdirSync(served, { recursive: true });
    git(served, 'init', '-q', '--bare', '-b', 'main', 'app.git');
    const work = join(base, 'work');
    mkdirSync(work);
    git(work, 'init', '-q', '-b', 'main');
    git(work, 'remote', 'add', 'origin', join(served, 'app.git'));
    writeFileSync(join(work, 'README.md'), '# app\n');
    writeFileSync(join(work, 'keep.ts'), 'export const kept = 1;\n');
    writeFileSync(join(work, 'old.ts'), 'export const old = 1;\n');
    // Names git quotes: one left unchanged, one changed.
    mkdirSync(join(work, 'docs'));
    writeFileSync(join(work, 'docs', 'naïve notes.md'), 'notes nobody changes\n');
    mkdirSync(join(work, '日本'));
    writeFileSync(join(work, '日本', '読む.md'), '# 読む\n');
    git(work, 'add', '-A');
    git(work, 'commit', '-q', '-m', 'first');
    first = git(work, 'rev-parse', 'HEAD');
    writeFileSync(join(work, 'README.md'), '# app\n\nNow with a second line.\n');
    writeFileSync(join(work, 'new.ts'), 'export const added = 2;\n');
    writeFileSync(join(work, '日本', '読む.md'), '# 読む\n\n新しい行\n');
    git(work, 'rm', '-q', 'old.ts');
    git(work, 'add', '-A');
    git(work, 'commit', '-q', '-m', 'second');
    second = git(work, 'rev-parse', 'HEAD');
    git(work, 'push', '-q', 'origin', 'main');
    server = await startGitHttpServer(join(base, 'served'));
    repoUrl = `${server.origin}/acme/app`;
    api = await startTestApi({
      GIT_ALLOW_HTTP: 'true',
      GIT_ALLOW_PRIVATE_HOSTS: 'true',
      GIT_ALLOWED_HOSTS: '127.0.0.1',
      SCAN_WAIT_SECONDS: '30',
    });
  });
  afterAll(async () => {
    await api?.close();
    await server?.close();
    rmSync(base, { recursive: true, force: true });
  });

  it('holds only the changed files, each with its diff, and says what changed', async () => {
    const response = await postScan(api, { repo_path: repoUrl, base_ref: first });
    const body = (await response.json()) as Envelope;
    expect(response.status, JSON.stringify(body)).toBe(201);
    expect(body.data.changes).toMatchObject({
      base_commit: first,
      head_commit: second,
      counts: { added: 1, modified: 2, deleted: 1, renamed: 0 },
    });
    const txt = await (await fetch(`${api.baseUrl}/v1/download/${body.data.scan_id}?format=txt`)).text();
    expect(txt).toContain('+Now with a second line.');
    expect(txt).toContain('export const added = 2;');
    expect(txt).toContain('old.ts');
    expect(txt).not.toContain('export const kept = 1;'); // unchanged: not in the digest
    expect(txt).toContain('日本/読む.md');
    expect(txt).toContain('+新しい行');
    expect(txt).not.toContain('notes nobody changes');
  });

  it('a ref the repository does not have is 422 BASE_REF_NOT_FOUND', async () => {
    const response = await postScan(api, { repo_path: repoUrl, base_ref: 'no-such-branch' });
    const body = (await response.json()) as Envelope;
    expect(response.status).toBe(422);
    expect(body.code).toBe('BASE_REF_NOT_FOUND');
  });

  it('is refused for a local path and for an upload (422 BASE_REF_NOT_SUPPORTED), and beside parts (400)', async () => {
    const local = await postScan(api, { repo_path: api.repoDir, base_ref: 'main' }, '?wait=false');
    expect(local.status).toBe(422);
    expect(((await local.json()) as Envelope).code).toBe('BASE_REF_NOT_SUPPORTED');

    const zip = await buildZip(join(base, 'app.zip'), { 'README.md': '# app\n' });
    const form = new FormData();
    form.append('file', new Blob([zip]), 'app.zip');
    const upload = await fetch(`${api.baseUrl}/v1/upload?base_ref=main`, { method: 'POST', body: form });
    expect(upload.status).toBe(422);
    expect(((await upload.json()) as Envelope).code).toBe('BASE_REF_NOT_SUPPORTED');

    const parted = await postScan(api, { repo_path: repoUrl, base_ref: first, max_tokens_per_part: 5000 });
    const partedBody = (await parted.json()) as Envelope;
    expect(parted.status).toBe(400);
    expect(partedBody.code).toBe('INVALID_REQUEST');
    expect(partedBody.detail).toContain('max_tokens_per_part');
  });
});
