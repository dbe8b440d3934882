// The file cache and carried outputs through the whole service: a repository on a loopback git
// server that gains commits during the test, rescanned through the API with its in-process worker.
// A rescan of a new commit copies every unchanged file's block from the earlier scan's outputs, or,
// where it cannot (a ZIP bundle, the earlier scan deleted, a changed file now over the size limit),
// takes each unchanged text from the file cache; either way its outputs are the bytes a fresh scan
// (`cache: false`) of the same commit writes.
import { mkdtempSync, rmSync } from 'node:fs';
import { readdir, readFile, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGitHttpServer } from '../../../packages/sources/test/remote/helpers/git-http-server.js';
import type { GitHttpServer } from '../../../packages/sources/test/remote/helpers/git-http-server.js';
import { seededRandom } from '../../../packages/core/test/scan/random-contents.js';
import { createGrowingRepo } from './support/growing-repo.js';
import type { GrowingRepo } from './support/growing-repo.js';
import { postScan } from './support/scenarios.js';
import { startTestApi } from './support/test-runtime.js';
import type { TestApi } from './support/test-runtime.js';

interface Result {
  scan_id: string;
  commit: string | null;
  cached_from?: string;
  total_files: number;
}

/** A GitHub token's shape (not a real one): redacted in every output, and so in the file cache. */
const SECRET = `ghp_${'a1B2c3D4e5F6g7H8i9J0'.repeat(2).slice(0, 36)}`;
const MODULES = 30;
/** Over MAX_FILE_BYTES below: a blob the clone leaves on the server. */
const LARGE_BYTES = 40_000;

describe('file cache: a rescan of a new commit reuses every unchanged file (loopback git server)', () => {
  let base: string;
  let repo: GrowingRepo;
  let server: GitHttpServer;
  let api: TestApi;
  let repoUrl: string;
  /** The newest completed scan with the default options: what the next one carries forward. */
  let newestDefault: string;

  const commit = (files: Record<string, string | Buffer>, message: string): string => repo.commit(files, message);

  beforeAll(async () => {
    base = mkdtempSync(join(tmpdir(), 'reposcan-file-reuse-'));
    repo = createGrowingRepo(base, 'files', { partialClones: true });
    const files: Record<string, string | Buffer> = {
      'README.md': '# files\n',
      // A name git quotes (not ASCII): reused like any other.
      'docs/naïve notes.md': '# notes\n',
      '.gitignore': 'build/\n',
      'config/settings.ts': `export const token = '${SECRET}';\n`,
      'assets/logo.png': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]),
      'data/large.txt': 'x'.repeat(LARGE_BYTES),
    };
    for (let i = 0; i < MODULES; i++) files[`src/module-${i}.ts`] = `export const value${i} = ${i};\n`.repeat(20);
    commit(files, 'first');
    server = await startGitHttpServer(repo.served);
    repoUrl = `${server.origin}/acme/files`;
    api = await startTestApi({
      GIT_ALLOW_HTTP: 'true',
      GIT_ALLOW_PRIVATE_HOSTS: 'true',
      GIT_ALLOWED_HOSTS: '127.0.0.1',
      SCAN_WAIT_SECONDS: '30',
      MAX_FILE_BYTES: '32768',
    });
  });
  afterAll(async () => {
    await api?.close();
    await server?.close();
    rmSync(base, { recursive: true, force: true });
  });

  const scan = async (body: Record<string, unknown>): Promise<Result> => {
    const response = await postScan(api, body);
    const envelope = (await response.json()) as { data: Result };
    expect(response.status).toBe(201);
    return envelope.data;
  };
  const download = async (scanId: string, format: string): Promise<Buffer> => {
    const response = await fetch(`${api.baseUrl}/v1/download/${scanId}?format=${format}`);
    expect(response.status).toBe(200);
    return Buffer.from(await response.arrayBuffer());
  };
  const metric = async (name: string): Promise<number> => {
    const text = await (await fetch(`${api.baseUrl}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith(`${name} `));
    return line === undefined ? 0 : Number(line.split(' ').pop());
  };
  const reusedSoFar = (): Promise<number> => metric('reposcan_files_reused_total');
  const clonesSoFar = (): Promise<number> => metric('reposcan_clone_duration_seconds_count');
  const cacheFiles = async (): Promise<string[]> => {
    const root = join(api.dataDir, 'file-cache', 'v1');
    const repositories = await readdir(root).catch(() => [] as string[]);
    const files: string[] = [];
    for (const repository of repositories)
      for (const name of await readdir(join(root, repository))) files.push(join(root, repository, name));
    return files;
  };
  const sameOutputs = async (a: string, b: string): Promise<void> => {
    for (const format of ['txt', 'md', 'json'])
      expect((await download(a, format)).equals(await download(b, format)), format).toBe(true);
  };

  it('carries every unchanged file forward from the first scan, and writes what a fresh scan writes', async () => {
    const first = await scan({ repo_path: repoUrl });
    expect(await reusedSoFar()).toBe(0);
    // What the first scan kept on the volume holds no secret in clear.
    const kept = await cacheFiles();
    expect(kept.some((file) => file.endsWith('.idx'))).toBe(true);
    for (const file of kept) expect((await readFile(file)).includes(SECRET)).toBe(false);

    const next = commit({ 'src/module-7.ts': 'export const value7 = "changed";\n' }, 'one file');
    const cloned = await clonesSoFar();
    const rescan = await scan({ repo_path: repoUrl });
    expect(await clonesSoFar()).toBe(cloned + 1);
    expect(rescan.commit).toBe(next);
    expect(rescan.cached_from).toBeUndefined();
    expect(rescan.total_files).toBe(first.total_files);
    // Every text but the changed one: the other modules, README.md, the notes, .gitignore and
    // config/settings.ts, copied from the first scan's outputs. The image and the large file are
    // never texts.
    expect(await reusedSoFar()).toBe(MODULES - 1 + 4);
    // What the first scan kept for the next commit (its records and where its blocks lie) holds no secret either.
    const carried = join(api.dataDir, 'scans', first.scan_id, 'carry.json');
    expect((await readFile(carried)).includes(SECRET)).toBe(false);
    const txt = (await download(rescan.scan_id, 'txt')).toString();
    expect(txt).toContain('value7 = "changed"');
    expect(txt).toContain('value8 = 8');
    expect(txt).not.toContain(SECRET);
    expect(txt).toContain('[REDACTED:');

    const fresh = await scan({ repo_path: repoUrl, cache: false });
    expect(await reusedSoFar()).toBe(MODULES + 3);
    await sameOutputs(rescan.scan_id, fresh.scan_id);
    newestDefault = fresh.scan_id;
    // The large file stayed on the server, known as too large from the first scan.
    const summary = (await (await fetch(`${api.baseUrl}/v1/summary/${rescan.scan_id}`)).json()) as {
      data: { skipped: { path: string; reason: string }[] };
    };
    expect(summary.data.skipped).toContainEqual({ path: 'data/large.txt', reason: 'too_large' });
  });

  it('stores a carried scan spliced: downloads, ranges and HEAD read as a fresh scan, and outlive the earlier scan', async () => {
    const earlier = newestDefault;
    commit({ 'src/module-3.ts': 'export const value3 = "three";\n' }, 'another file');
    const rescan = await scan({ repo_path: repoUrl });
    const result = join(api.dataDir, 'scans', rescan.scan_id, 'result');
    const stored = await readdir(result);
    for (const format of ['txt', 'md', 'json']) {
      expect(stored).toContain(`output.${format}.splice`);
      expect(stored).not.toContain(`output.${format}`);
    }
    // A repeat of that commit is served from the rescan: the same pieces, linked again.
    const repeat = await scan({ repo_path: repoUrl });
    expect(repeat.cached_from).toBe(rescan.scan_id);
    const fresh = await scan({ repo_path: repoUrl, cache: false });
    // The earlier scan goes: the rescan's outputs still read whole, from its own links to the bytes;
    // then the rescan goes, and the repeat still reads whole.
    expect((await fetch(`${api.baseUrl}/v1/cleanup/${earlier}`, { method: 'DELETE' })).status).toBe(200);
    await sameOutputs(rescan.scan_id, fresh.scan_id);
    expect((await fetch(`${api.baseUrl}/v1/cleanup/${rescan.scan_id}`, { method: 'DELETE' })).status).toBe(200);
    await sameOutputs(repeat.scan_id, fresh.scan_id);
    const want = await download(fresh.scan_id, 'json');
    const url = `${api.baseUrl}/v1/download/${repeat.scan_id}?format=json`;
    const part = await fetch(url, { headers: { range: 'bytes=100-20099' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 100-20099/${want.length}`);
    expect(Buffer.from(await part.arrayBuffer()).equals(want.subarray(100, 20100))).toBe(true);
    const tail = await fetch(url, { headers: { range: 'bytes=-500' } });
    expect(Buffer.from(await tail.arrayBuffer()).equals(want.subarray(want.length - 500))).toBe(true);
    // Ranges anywhere, within a piece or across the pieces' boundaries.
    const rng = seededRandom(30);
    for (let i = 0; i < 24; i++) {
      const from = Math.floor(rng() * want.length);
      const to = Math.min(want.length - 1, from + Math.floor(rng() * 40_000));
      const ranged = await fetch(url, { headers: { range: `bytes=${from}-${to}` } });
      expect(ranged.status).toBe(206);
      const bytes = Buffer.from(await ranged.arrayBuffer());
      expect(bytes.equals(want.subarray(from, to + 1)), `bytes=${from}-${to}`).toBe(true);
    }
    const head = await fetch(url, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String(want.length));
    expect(head.headers.get('accept-ranges')).toBe('bytes');
    const modified = head.headers.get('last-modified') ?? '';
    // (fetch would add `Cache-Control: no-cache` to a conditional request, which asks for the bytes.)
    const conditional = { 'if-modified-since': modified, 'cache-control': 'max-age=0' };
    expect((await fetch(url, { headers: conditional })).status).toBe(304);
    // A range under an If-Range that no longer holds is the whole output.
    const stale = await fetch(url, { headers: { range: 'bytes=0-9', 'if-range': '"0"' } });
    expect(stale.status).toBe(200);
    expect(Buffer.from(await stale.arrayBuffer()).length).toBe(want.length);
    expect((await fetch(url, { headers: { 'if-match': head.headers.get('etag') ?? '' } })).status).toBe(200);
    expect((await fetch(url, { headers: { 'if-match': '"0"' } })).status).toBe(412);
    const beyond = await fetch(url, { headers: { range: `bytes=${want.length}-` } });
    expect(beyond.status).toBe(416);
    expect(beyond.headers.get('content-range')).toBe(`bytes */${want.length}`);
    newestDefault = fresh.scan_id;
  });

  it('a changed file the outputs cannot carry (now over the size limit) has the scan cloned again and made as usual', async () => {
    const [counted, cloned] = [await reusedSoFar(), await clonesSoFar()];
    commit({ 'src/module-8.ts': 'y'.repeat(LARGE_BYTES) }, 'a file grows past the limit');
    const rescan = await scan({ repo_path: repoUrl });
    // The first clone left every unchanged file on the server for the carry, which the engine
    // refused: the second takes each unchanged text from the file cache (all but the ignore file).
    expect(await clonesSoFar()).toBe(cloned + 2);
    expect(await reusedSoFar()).toBe(counted + MODULES - 1 + 3);
    const summary = (await (await fetch(`${api.baseUrl}/v1/summary/${rescan.scan_id}`)).json()) as {
      data: { skipped: { path: string; reason: string }[] };
    };
    expect(summary.data.skipped).toContainEqual({ path: 'src/module-8.ts', reason: 'too_large' });
    const fresh = await scan({ repo_path: repoUrl, cache: false });
    await sameOutputs(rescan.scan_id, fresh.scan_id);
    newestDefault = fresh.scan_id;
    commit({ 'src/module-8.ts': 'export const value8 = 8;\n'.repeat(20) }, 'the file as it was');
  });

  it('without carried outputs (a ZIP bundle, or the earlier scan deleted) the file cache gives each unchanged text', async () => {
    const before = await reusedSoFar();
    await scan({ repo_path: repoUrl, create_zip: true });
    // Every text but the ignore file (which the walk reads itself), as the first rescan left them.
    expect(await reusedSoFar()).toBe(before + MODULES + 3);
    expect((await fetch(`${api.baseUrl}/v1/cleanup/${newestDefault}`, { method: 'DELETE' })).status).toBe(200);
    for (const [i, body] of [{ create_zip: true }, {}].entries()) {
      commit({ 'src/module-9.ts': `export const nine = ${i};\n` }, `change ${i}`);
      const counted = await reusedSoFar();
      const rescan = await scan({ repo_path: repoUrl, ...body });
      // The scan the default options would carry forward is deleted: nothing to carry.
      expect(await reusedSoFar()).toBe(counted + MODULES - 1 + 3);
      await sameOutputs(rescan.scan_id, (await scan({ repo_path: repoUrl, ...body, cache: false })).scan_id);
    }
  });

  it('options that shape texts are another key; secrets other than redact neither keep nor take', async () => {
    const before = await reusedSoFar();
    const compressed = await scan({ repo_path: repoUrl, compress: 'signatures' });
    expect(await reusedSoFar()).toBe(before);
    commit({ 'src/module-3.ts': 'export function three(): number {\n  return 3;\n}\n' }, 'another file');
    const again = await scan({ repo_path: repoUrl, compress: 'signatures' });
    expect(await reusedSoFar()).toBe(before + MODULES - 1 + 4);
    await sameOutputs(
      again.scan_id,
      (await scan({ repo_path: repoUrl, compress: 'signatures', cache: false })).scan_id,
    );
    expect(compressed.commit).not.toBe(again.commit);

    const kept = (await cacheFiles()).length;
    commit({ 'src/module-4.ts': 'export const four = 4;\n' }, 'a third file');
    await scan({ repo_path: repoUrl, secrets: 'report' });
    await scan({ repo_path: repoUrl, secrets: 'off' });
    expect(await reusedSoFar()).toBe(before + MODULES + 3);
    expect((await cacheFiles()).length).toBe(kept);
  });

  it('the janitor drops what no scan used for FILE_CACHE_DAYS; the next scan then processes every file', async () => {
    // With a ZIP bundle, which carries no outputs forward: only the file cache could serve it.
    const files = await cacheFiles();
    const old = new Date(Date.now() - 8 * 86_400_000);
    for (const file of files) await utimes(file, old, old);
    const sweep = await api.runtime.janitor.sweep();
    expect(sweep.fileCacheSegmentsDropped).toBeGreaterThan(0);
    expect(await cacheFiles()).toEqual([]);
    const before = await reusedSoFar();
    commit({ 'src/module-5.ts': 'export const five = 5;\n' }, 'after the sweep');
    await scan({ repo_path: repoUrl, create_zip: true });
    expect(await reusedSoFar()).toBe(before);
    expect((await cacheFiles()).length).toBeGreaterThan(0);
  });
});
