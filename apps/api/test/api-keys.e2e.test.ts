// API keys as a user meets them: two API processes and a worker on one Redis and one volume,
// keys in a file that the CLI edits while they run. A key opens /v1, a scan is its creator's
// (any other key is told it does not exist, on either process), an admin key sees and deletes
// every scan, limits count per key across both processes, and a revoked key is refused at once.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKeyRecord, formatApiKeyLine, generateApiKey } from '@reposcan/config';
import { purgeQueuePrefix } from '@reposcan/queue';
import { freePort } from '../../../packages/queue/test/support/redis.js';
import { startTestApi } from './support/test-runtime.js';
import { buildZip } from './support/zips.js';
import type { TestApi } from './support/test-runtime.js';
import { startApiProcess, startWorkerProcess } from './support/worker-processes.js';
import type { ServiceProcess } from './support/worker-processes.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const LAUNCHER = fileURLToPath(new URL('../../cli/bin/reposcan.js', import.meta.url));
const ALICE_RATE = 3;

/** `reposcan …` as an operator runs it (from the sources). */
function reposcan(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [LAUNCHER, ...args],
      { env: { ...process.env, REPOSCAN_CLI_FROM_SOURCE: '1' }, timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        if (code === null) return reject(error ?? new Error('no exit code'));
        resolve({ code, stdout, stderr });
      },
    );
  });
}

interface Answer {
  status: number;
  body: { code?: string; detail?: string; data?: { state?: string; owner?: string } } | null;
  headers: Headers;
  text: string;
}

async function call(url: string, key: string | null, init: RequestInit = {}): Promise<Answer> {
  const headers = new Headers(init.headers);
  if (key !== null) headers.set('authorization', `Bearer ${key}`);
  const response = await fetch(url, { ...init, headers });
  const text = await response.text();
  let body = null;
  try {
    body = JSON.parse(text) as Answer['body'];
  } catch {
    // an artifact or an event stream
  }
  return { status: response.status, body, headers: response.headers, text };
}

describe('API keys across two API processes on one Redis', () => {
  const prefix = `reposcan-keys-${randomUUID().slice(0, 8)}`;
  let base: string;
  let keyFile: string;
  let a: TestApi;
  let b: { process: ServiceProcess; url: string };
  let worker: ServiceProcess;
  const alice = generateApiKey();
  const root = generateApiKey();
  let bob = '';

  beforeAll(async () => {
    base = await mkdtemp(join(tmpdir(), 'reposcan-keys-'));
    keyFile = join(base, 'keys');
    await writeFile(
      keyFile,
      [
        '# reposcan API keys',
        formatApiKeyLine(apiKeyRecord('alice', alice, { rate: ALICE_RATE })),
        formatApiKeyLine(apiKeyRecord('root', root, { admin: true })),
        '',
      ].join('\n'),
    );
    const added = await reposcan(['keys', 'add', 'bob', '--file', keyFile]);
    expect(added.code, added.stderr).toBe(0);
    bob = added.stdout.trim();
    expect(bob).toMatch(/^rsk_[A-Za-z0-9_-]{43}$/);

    a = await startTestApi({
      REDIS_URL,
      ROLE: 'api',
      QUEUE_PREFIX: prefix,
      API_KEYS_FILE: keyFile,
      RATE_LIMIT_PER_MINUTE: '1000',
      SCAN_WAIT_SECONDS: '0',
    });
    const port = await freePort();
    const common = {
      REDIS_URL,
      QUEUE_PREFIX: prefix,
      DATA_DIR: a.dataDir,
      ALLOWED_LOCAL_ROOTS: a.localRoot,
      API_KEYS_FILE: keyFile,
    };
    const [apiB, w] = await Promise.all([
      startApiProcess({
        ...common,
        ROLE: 'api',
        HOST: '127.0.0.1',
        PORT: String(port),
        RATE_LIMIT_PER_MINUTE: '1000',
        SCAN_WAIT_SECONDS: '0',
        PROTECT_OPS_ROUTES: 'true',
        ENABLE_QUEUE_DASHBOARD: 'true',
      }),
      startWorkerProcess({ ...common, ROLE: 'worker', WORKER_CONCURRENCY: '2' }),
    ]);
    b = { process: apiB, url: `http://127.0.0.1:${port}` };
    worker = w;
  });
  afterAll(async () => {
    await Promise.all([b?.process.stop(), worker?.stop()]);
    await a?.close();
    await purgeQueuePrefix(REDIS_URL, prefix);
    await rm(base, { recursive: true, force: true });
  });

  /** Submits a scan of the sample repository with `key` on `url`, answered 202 at once. */
  async function submit(url: string, key: string): Promise<string> {
    const answer = await call(`${url}/v1/scan?wait=false`, key, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ repo_path: a.repoDir }),
    });
    expect(answer.status, answer.text).toBe(202);
    return (answer.body?.data as { scan_id: string }).scan_id;
  }

  async function completed(url: string, key: string, scanId: string): Promise<void> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const answer = await call(`${url}/v1/scans/${scanId}`, key);
      expect(answer.status, answer.text).toBe(200);
      if (answer.body?.data?.state === 'completed') return;
      expect(answer.body?.data?.state).not.toMatch(/failed|cancelled/);
      if (Date.now() > deadline) throw new Error(`scan ${scanId} did not complete`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  it('without a key, or with a wrong one, /v1 answers 401 with a challenge and a sentence; /health and /ready stay open', async () => {
    const someScan = `/v1/scans/${randomUUID()}`;
    for (const url of [a.baseUrl, b.url]) {
      const missing = await call(`${url}${someScan}`, null);
      expect(missing.status).toBe(401);
      expect(missing.headers.get('www-authenticate')).toBe('Bearer realm="reposcan"');
      expect(missing.body?.code).toBe('API_KEY_MISSING');
      expect(missing.body?.detail).toContain('Authorization: Bearer <key>');

      for (const wrong of [generateApiKey(), `${alice}x`, 'Basic xyz']) {
        const answer = await call(`${url}/v1/inspect`, wrong, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ repo_path: a.repoDir }),
        });
        expect(answer.status).toBe(401);
        expect(answer.headers.get('www-authenticate')).toMatch(/^Bearer realm="reposcan"/);
        expect(answer.body?.code).toBe('API_KEY_INVALID');
      }
      // A scheme other than Bearer carries no key for /v1.
      const basic = await call(`${url}${someScan}`, null, {
        headers: { authorization: `Basic ${Buffer.from(`alice:${alice}`).toString('base64')}` },
      });
      expect(basic.body?.code).toBe('API_KEY_MISSING');

      expect((await call(`${url}/health`, null)).status).toBe(200);
      expect((await call(`${url}/ready`, null)).status).toBe(200);
      expect((await call(`${url}/`, null)).status).toBe(200);
      // A known key that asks about an unknown scan gets the usual 404.
      expect((await call(`${url}${someScan}`, alice)).body?.code).toBe('SCAN_NOT_FOUND');
    }
    // The latency metric files a 401 under the route it was refused at, as it does the 404.
    const metrics = (await call(`${a.baseUrl}/metrics`, null)).text;
    for (const status of ['401', '404'])
      expect(metrics).toMatch(
        new RegExp(
          `reposcan_http_request_duration_seconds_count\\{method="GET",route="/v1/scans/:scan_id",status="${status}"\\} [1-9]`,
        ),
      );
  });

  it("a scan is its creator's on every process: another key gets 404 for status, events, downloads, summary and delete", async () => {
    const scanId = await submit(a.baseUrl, bob);
    await completed(b.url, bob, scanId);
    const own = await call(`${b.url}/v1/scans/${scanId}`, bob);
    expect(own.body?.data?.owner).toBe('bob');
    // Read by its owner first, so the summary and status are in B's caches when alice asks.
    expect((await call(`${b.url}/v1/summary/${scanId}`, bob)).status).toBe(200);
    const md = await call(`${a.baseUrl}/v1/download/${scanId}?format=md`, bob);
    expect(md.status).toBe(200);
    expect(md.text).toContain('README');

    for (const url of [a.baseUrl, b.url]) {
      for (const [method, path] of [
        ['GET', `/v1/scans/${scanId}`],
        ['GET', `/v1/scans/${scanId}/events`],
        ['GET', `/v1/download/${scanId}?format=md`],
        ['GET', `/v1/summary/${scanId}`],
        ['DELETE', `/v1/cleanup/${scanId}`],
      ] as const) {
        const answer = await call(`${url}${path}`, alice, { method });
        expect(answer.status, `${method} ${path}`).toBe(404);
        expect(answer.body?.code, `${method} ${path}`).toBe('SCAN_NOT_FOUND');
        expect(answer.body?.detail).toContain(scanId);
      }
    }
    // alice's DELETE removed nothing.
    expect((await call(`${b.url}/v1/scans/${scanId}`, bob)).status).toBe(200);
    const events = await call(`${a.baseUrl}/v1/scans/${scanId}/events`, bob);
    expect(events.status).toBe(200);
    expect(events.text).toContain('"state":"completed"');
  });

  it('an admin key reads, downloads and deletes any scan; the owner then finds it gone', async () => {
    const scanId = await submit(b.url, bob);
    await completed(a.baseUrl, bob, scanId);
    const status = await call(`${a.baseUrl}/v1/scans/${scanId}`, root);
    expect(status.status).toBe(200);
    expect(status.body?.data?.owner).toBe('bob');
    expect((await call(`${b.url}/v1/summary/${scanId}`, root)).status).toBe(200);
    expect((await call(`${b.url}/v1/download/${scanId}?format=json`, root)).status).toBe(200);
    expect((await call(`${b.url}/v1/cleanup/${scanId}`, root, { method: 'DELETE' })).status).toBe(200);
    expect((await call(`${a.baseUrl}/v1/scans/${scanId}`, bob)).body?.code).toBe('SCAN_NOT_FOUND');
  });

  it(`rate=${ALICE_RATE} gives alice ${ALICE_RATE} scans a minute across both processes, while bob still scans`, async () => {
    const statuses: number[] = [];
    let refusal: Answer | null = null;
    for (let i = 0; i < ALICE_RATE + 2; i++) {
      const answer = await call(`${i % 2 === 0 ? a.baseUrl : b.url}/v1/scan?wait=false`, alice, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ repo_path: a.repoDir }),
      });
      statuses.push(answer.status);
      if (answer.status === 429) refusal = answer;
    }
    expect(statuses).toEqual([...Array<number>(ALICE_RATE).fill(202), 429, 429]);
    expect(refusal?.body?.code).toBe('RATE_LIMITED');
    expect(refusal?.body?.detail).toContain('the key alice');
    expect(Number(refusal?.headers.get('retry-after'))).toBeGreaterThan(0);
    await submit(b.url, bob);
    await submit(a.baseUrl, bob);
  });

  it('PROTECT_OPS_ROUTES: /metrics and the queue dashboard need an admin key there; /metrics stays open where it is off', async () => {
    expect((await call(`${a.baseUrl}/metrics`, null)).status).toBe(200);
    const none = await call(`${b.url}/metrics`, null);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toContain('Bearer realm="reposcan"');
    expect(none.headers.get('www-authenticate')).toContain('Basic realm="reposcan"');
    const user = await call(`${b.url}/metrics`, bob);
    expect(user.status).toBe(403);
    expect(user.body?.code).toBe('ADMIN_KEY_REQUIRED');
    const admin = await call(`${b.url}/metrics`, root);
    expect(admin.status).toBe(200);
    expect(admin.text).toContain('reposcan_scans_accepted_total');
    // A browser's prompt: Basic, the key as the password.
    const basic = await call(`${b.url}/metrics`, null, {
      headers: { authorization: `Basic ${Buffer.from(`ops:${root}`).toString('base64')}` },
    });
    expect(basic.status).toBe(200);
    const dashboard = await call(`${b.url}/admin/queues`, null);
    expect(dashboard.status).toBe(401);
    expect(dashboard.headers.get('www-authenticate')).toContain('Basic realm="reposcan"');
    expect((await call(`${b.url}/admin/queues/api/queues`, bob)).status).toBe(403);
    const board = await call(`${b.url}/admin/queues`, null, {
      headers: { authorization: `Basic ${Buffer.from(`ops:${root}`).toString('base64')}` },
    });
    expect(board.status).toBe(200);
    expect(board.text).toContain('<html');
  });

  it('a key revoked with `reposcan keys revoke` while both processes run is refused by each at its next request', async () => {
    expect((await call(`${a.baseUrl}/v1/scans/${randomUUID()}`, bob)).status).toBe(404);
    expect((await call(`${b.url}/v1/scans/${randomUUID()}`, bob)).status).toBe(404);
    const revoked = await reposcan(['keys', 'revoke', 'bob', '--file', keyFile]);
    expect(revoked.code, revoked.stderr).toBe(0);
    for (const url of [a.baseUrl, b.url]) {
      const answer = await call(`${url}/v1/scans/${randomUUID()}`, bob);
      expect(answer.status).toBe(401);
      expect(answer.body?.code).toBe('API_KEY_INVALID');
      expect(answer.headers.get('www-authenticate')).toMatch(/^Bearer realm="reposcan"/);
      // The other keys are untouched.
      expect((await call(`${url}/v1/scans/${randomUUID()}`, root)).status).toBe(404);
    }
  });
});

describe('API keys from API_KEYS, one process', () => {
  let api: TestApi;
  const carol = 'carol-key-0123456789abcdef';
  const admin = 'admin-key-0123456789abcdef';

  beforeAll(async () => {
    api = await startTestApi({
      API_KEYS: `carol:${carol},boss:${admin}:admin`,
      SCAN_WAIT_SECONDS: '20',
      MAX_EVENT_STREAMS_PER_CLIENT: '1',
    });
  });
  afterAll(async () => {
    await api?.close();
  });

  /** A queued scan written straight to the volume (never enqueued, so it stays queued), of `owner` or of no one. */
  async function queuedScan(owner?: string): Promise<string> {
    const scanId = randomUUID();
    const now = new Date().toISOString();
    await api.runtime.store.create(
      scanId,
      {},
      {
        version: 1,
        scan_id: scanId,
        state: 'queued',
        source: { type: 'local', url: null },
        created_at: now,
        updated_at: now,
        started_at: null,
        completed_at: null,
        attempt: 0,
        progress: { phase: 'queued', files_done: 0, files_total: 0 },
        error: null,
        result: null,
        ...(owner === undefined ? {} : { owner }),
      },
    );
    return scanId;
  }

  it('a scan from before keys were turned on (no owner) is for admin keys only', async () => {
    const scanId = await queuedScan();
    expect((await call(`${api.baseUrl}/v1/scans/${scanId}`, carol)).body?.code).toBe('SCAN_NOT_FOUND');
    expect((await call(`${api.baseUrl}/v1/cleanup/${scanId}`, carol, { method: 'DELETE' })).status).toBe(404);
    const seen = await call(`${api.baseUrl}/v1/scans/${scanId}`, admin);
    expect(seen.status).toBe(200);
    expect(seen.body?.data?.owner).toBeUndefined();
  });

  it('an upload belongs to its key too; a waiting POST answers the result to its creator', async () => {
    const archive = await buildZip(join(api.localRoot, 'demo.zip'), { 'demo/README.md': '# demo\n' });
    const form = new FormData();
    form.append('file', new Blob([archive]), 'demo.zip');
    const answer = await call(`${api.baseUrl}/v1/upload`, carol, { method: 'POST', body: form });
    expect(answer.status, answer.text).toBe(201);
    const scanId = (answer.body?.data as { scan_id: string }).scan_id;
    expect((await call(`${api.baseUrl}/v1/scans/${scanId}`, carol)).body?.data?.owner).toBe('carol');
    expect((await call(`${api.baseUrl}/v1/download/${scanId}?format=txt`, admin)).status).toBe(200);
  });

  it('inspect slots count per key: one key holds at most half of them, another still gets one', async () => {
    // INSPECT_CONCURRENCY is 4 here, so a key holds 2 at most, whatever address it comes from.
    const preview = (key: string) =>
      call(`${api.baseUrl}/v1/inspect`, key, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ repo_path: api.repoDir }),
      });
    const [mine, other] = await Promise.all([
      Promise.all(Array.from({ length: 5 }, () => preview(carol))),
      preview(admin),
    ]);
    expect(other.status, other.text).toBe(200);
    expect(mine.filter((a) => a.status === 200).length).toBeGreaterThanOrEqual(1);
    const refused = mine.filter((a) => a.status === 429);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    for (const answer of refused) {
      expect(answer.body?.code).toBe('INSPECT_BUSY');
      expect(answer.body?.detail).toMatch(/You already run 2 of the 4 inspect slots/);
    }
  });

  it('event-stream caps count per key, not per address: two keys from one address each hold their own', async () => {
    const streams: AbortController[] = [];
    const open = async (key: string, scanId: string): Promise<Answer['body'] | number> => {
      const stop = new AbortController();
      const response = await fetch(`${api.baseUrl}/v1/scans/${scanId}/events`, {
        headers: { authorization: `Bearer ${key}` },
        signal: stop.signal,
      });
      if (response.status !== 200) return (await response.json()) as Answer['body'];
      streams.push(stop);
      return response.status;
    };
    try {
      expect(await open(admin, await queuedScan())).toBe(200);
      expect(await open(admin, await queuedScan())).toMatchObject({ code: 'TOO_MANY_EVENT_STREAMS' });
      expect(await open(carol, await queuedScan('carol'))).toBe(200);
    } finally {
      for (const stop of streams) stop.abort();
    }
  });
});
