// The typed client against a real API (embedded mode, real HTTP, real files).
import { createHash, randomUUID } from 'node:crypto';
import { readFile, readdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { purgeQueuePrefix } from '@reposcan/queue';
import { startTestApi } from '../../../apps/api/test/support/test-runtime.js';
import type { TestApi } from '../../../apps/api/test/support/test-runtime.js';
import { buildZip, craftZip } from '../../../apps/api/test/support/zips.js';
import { ReposcanApiError, ReposcanClient, ReposcanConnectionError, ReposcanIntegrityError } from '../src/index.js';
import type { ScanEvent } from '../src/index.js';
import { downloadToFile, uploadFile } from '../src/node.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('ReposcanClient against a real API', () => {
  const prefix = `reposcan-client-${randomUUID().slice(0, 8)}`;
  let api: TestApi;
  let client: ReposcanClient;
  let work: string;

  beforeAll(async () => {
    api = await startTestApi();
    client = new ReposcanClient({ baseUrl: `${api.baseUrl}/` });
    work = await mkdtemp(join(tmpdir(), 'reposcan-client-'));
  });
  afterAll(async () => {
    await api?.close();
    await rm(work, { recursive: true, force: true });
  });

  it('submits without waiting, follows the events to completion, and downloads byte-exact artifacts', async () => {
    const submission = await client.scan({ repo_path: api.repoDir, create_zip: true });
    expect(submission.kind).toBe('accepted');
    if (submission.kind !== 'accepted') return;
    const events: ScanEvent[] = [];
    for await (const event of client.follow(submission.accepted)) events.push(event);
    const last = events.at(-1)!;
    expect(last).toMatchObject({ event: 'state', data: { state: 'completed', scan_id: submission.accepted.scan_id } });
    const result = last.data.result!;
    expect(Object.keys(result.artifacts).sort()).toEqual(['json', 'md', 'txt', 'zip']);

    for (const [format, artifact] of Object.entries(result.artifacts)) {
      const path = join(work, `out.${format}`);
      const saved = await downloadToFile(client, result.scan_id, format as 'txt', path, { expected: artifact });
      const bytes = await readFile(path);
      const direct = Buffer.from(
        await (await fetch(`${api.baseUrl}/v1/download/${result.scan_id}?format=${format}`)).arrayBuffer(),
      );
      expect(bytes.equals(direct)).toBe(true);
      expect(saved).toMatchObject({ bytes: artifact.bytes, sha256: createHash('sha256').update(bytes).digest('hex') });
      // A range of it: those bytes alone.
      const range = { start: 7, end: Math.min(bytes.length, 300) };
      const piece = await client.download(result.scan_id, format as 'txt', { range });
      expect(piece.bytes).toBe(range.end - range.start);
      expect(
        Buffer.from(await new Response(piece.body).arrayBuffer()).equals(bytes.subarray(range.start, range.end)),
      ).toBe(true);
    }
    expect((await client.summary(result.scan_id)).files.length).toBe(result.num_textual_files);
    expect(await client.status(result.scan_id)).toMatchObject({ state: 'completed' });
  });

  it('waits for the result when asked (201), and cleanup deletes the scan', async () => {
    const submission = await client.scan({ repo_path: api.repoDir, lite: true }, { wait: true });
    expect(submission.kind).toBe('completed');
    if (submission.kind !== 'completed') return;
    expect(await client.cleanup(submission.result.scan_id)).toEqual({ scan_id: submission.result.scan_id });
    const gone = await client.status(submission.result.scan_id).catch((e: unknown) => e);
    expect(gone).toBeInstanceOf(ReposcanApiError);
    expect(gone).toMatchObject({ status: 404, code: 'SCAN_NOT_FOUND' });
  });

  it('an error answer becomes a ReposcanApiError with status, code, detail and request_id', async () => {
    const error = await client.scan({ repo_path: '/etc' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReposcanApiError);
    const e = error as ReposcanApiError;
    expect({ status: e.status, code: e.code, scan_id: e.scan_id }).toEqual({
      status: 403,
      code: 'OUTSIDE_ALLOWED_ROOTS',
      scan_id: null,
    });
    expect(e.detail).toMatch(/ALLOWED_LOCAL_ROOTS/);
    expect(e.request_id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('uploads a zip from disk; a failed scan it waited for carries its scan_id', async () => {
    const good = join(work, 'good.zip');
    await buildZip(good, { 'demo/README.md': '# Demo\n', 'demo/a.py': 'print(1)\n' });
    const done = await uploadFile(client, good, { exclude_patterns: ['*.py'] }, { wait: true });
    expect(done.kind === 'completed' && done.result).toMatchObject({ repo_name: 'demo', num_textual_files: 1 });

    // A size lie passes the upload's check, so a scan exists and fails in the worker.
    const bad = join(work, 'bad.zip');
    craftZip(bad, {
      entries: [
        { name: 'repo/README.md', data: '# fine\n' },
        { name: 'repo/liar.bin', zeros: 1024 * 1024, method: 'deflated' },
      ],
      patches: [{ op: 'set-uncompressed', index: 1, size: 10 }],
    });
    const error = (await uploadFile(client, bad, {}, { wait: true }).catch((e: unknown) => e)) as ReposcanApiError;
    expect(error).toMatchObject({ status: 422, code: 'UNSAFE_ARCHIVE' });
    expect(error.scan_id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('a download that does not match the listed checksum is refused and leaves no file', async () => {
    const submission = await client.scan({ repo_path: api.repoDir }, { wait: true });
    if (submission.kind !== 'completed') throw new Error('expected a completed scan');
    const artifact = submission.result.artifacts.md!;
    const dir = await mkdtemp(join(work, 'integrity-'));
    const error = await downloadToFile(client, submission.result.scan_id, 'md', join(dir, 'x.md'), {
      expected: { ...artifact, sha256: '0'.repeat(64) },
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReposcanIntegrityError);
    expect(await readdir(dir)).toEqual([]);
  });

  it('inspect, health and ready answer typed data', async () => {
    const preview = await client.inspect({ repo_path: api.repoDir, include_patterns: ['*.md'] });
    expect(preview.files.length).toBeGreaterThan(0);
    expect(preview.files.every((f) => f.path.endsWith('.md'))).toBe(true);
    expect(await client.health()).toMatchObject({ status: 'ok' });
    expect(await client.ready()).toMatchObject({ status: 'ready' });
  });

  it('follow survives event streams that drop: it reads the status and reconnects until the scan ends', async () => {
    // The real API behind a fetch that cuts the first two event streams before any event.
    let dropped = 0;
    const flaky: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      if (!urlOf(input).endsWith('/events') || dropped >= 2) return response;
      dropped += 1;
      await response.body?.cancel();
      throw new TypeError('fetch failed', { cause: new Error('socket hang up') });
    };
    const flakyClient = new ReposcanClient({ baseUrl: api.baseUrl, fetch: flaky });
    const submission = await flakyClient.scan({ repo_path: api.repoDir });
    if (submission.kind !== 'accepted') throw new Error('expected 202');
    const events: ScanEvent[] = [];
    for await (const event of flakyClient.follow(submission.accepted, { reconnectDelayMs: 10 })) events.push(event);
    expect(dropped).toBeGreaterThanOrEqual(1);
    expect(events.at(-1)).toMatchObject({
      event: 'state',
      data: { state: 'completed', scan_id: submission.accepted.scan_id },
    });
    expect(events.at(-1)!.data.result?.artifacts.md).toBeDefined();
  });

  it('follow gives up after maxReconnects when the stream keeps dropping, with the connection error', async () => {
    const queued = await startTestApi({ REDIS_URL, ROLE: 'api', QUEUE_PREFIX: prefix });
    try {
      let attempts = 0;
      const broken: typeof fetch = async (input, init) => {
        if (urlOf(input).endsWith('/events')) {
          attempts += 1;
          throw new TypeError('fetch failed', { cause: new Error('connection reset') });
        }
        return fetch(input, init);
      };
      const brokenClient = new ReposcanClient({ baseUrl: queued.baseUrl, fetch: broken });
      const submission = await brokenClient.scan({ repo_path: queued.repoDir });
      if (submission.kind !== 'accepted') throw new Error('expected 202');
      const error = await (async () => {
        for await (const _ of brokenClient.follow(submission.accepted, { maxReconnects: 2, reconnectDelayMs: 10 })) {
          // the scan stays queued: no worker runs on this API
        }
      })().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ReposcanConnectionError);
      expect(attempts).toBe(3);
    } finally {
      await queued.close();
      await purgeQueuePrefix(REDIS_URL, prefix);
    }
  });

  it('no server at all is a ReposcanConnectionError; a non-API answer is UNEXPECTED_RESPONSE', async () => {
    const port = await closedPort();
    const offline = new ReposcanClient({ baseUrl: `http://127.0.0.1:${port}` });
    const error = await offline.health().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReposcanConnectionError);
    expect(String((error as Error).message)).toMatch(/ECONNREFUSED/);

    const notApi = new ReposcanClient({ baseUrl: `${api.baseUrl}/docs` });
    const odd = (await notApi.health().catch((e: unknown) => e)) as ReposcanApiError;
    expect(odd).toBeInstanceOf(ReposcanApiError);
    expect(odd.code).toBe('UNEXPECTED_RESPONSE');
  });
});

function urlOf(input: string | URL | Request): string {
  return typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
}

/** A loopback port with nothing listening: bound once, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('ReposcanClient with an API key', () => {
  const key = 'client-key-0123456789abcdef';
  let api: TestApi;

  beforeAll(async () => {
    api = await startTestApi({ API_KEYS: `tool:${key}` });
  });
  afterAll(async () => {
    await api?.close();
  });

  it("apiKey is sent on every request, the event stream and downloads included; a scan is then the key's", async () => {
    const client = new ReposcanClient({ baseUrl: api.baseUrl, apiKey: key });
    const submission = await client.scan({ repo_path: api.repoDir });
    if (submission.kind !== 'accepted') throw new Error('expected 202');
    const events: ScanEvent[] = [];
    for await (const event of client.follow(submission.accepted)) events.push(event);
    expect(events.at(-1)?.data).toMatchObject({ state: 'completed', owner: 'tool' });
    const download = await client.download(submission.accepted.scan_id, 'md');
    expect((await new Response(download.body).arrayBuffer()).byteLength).toBe(download.bytes);
    expect((await client.summary(submission.accepted.scan_id)).scan_id).toBe(submission.accepted.scan_id);
    await client.cleanup(submission.accepted.scan_id);
  });

  it('without the key, or with a wrong one, a ReposcanApiError with status 401 and the code', async () => {
    const none = await new ReposcanClient({ baseUrl: api.baseUrl }).status(randomUUID()).catch((e: unknown) => e);
    expect(none).toBeInstanceOf(ReposcanApiError);
    expect(none).toMatchObject({ status: 401, code: 'API_KEY_MISSING' });
    const wrong = await new ReposcanClient({ baseUrl: api.baseUrl, apiKey: 'wrong-key-0123456789' })
      .status(randomUUID())
      .catch((e: unknown) => e);
    expect(wrong).toMatchObject({ status: 401, code: 'API_KEY_INVALID' });
    // Health needs no key.
    expect(await new ReposcanClient({ baseUrl: api.baseUrl }).health()).toMatchObject({ status: 'ok' });
  });
});
