import { randomUUID } from 'node:crypto';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScanStore } from '@reposcan/storage';
import { postScan } from './support/scenarios.js';
import { startTestApi } from './support/test-runtime.js';
import type { TestApi } from './support/test-runtime.js';
import { craftZip } from './support/zips.js';

interface ErrorBody {
  status: string;
  error: string;
  code: string;
  detail: string;
  request_id: string;
  timestamp: string;
  data?: { scan_id: string };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

async function expectError(response: Response, status: number, code: string): Promise<ErrorBody> {
  const body = (await response.json()) as ErrorBody;
  expect({ status: response.status, code: body.code }).toEqual({ status, code });
  expect(body.status).toBe('error');
  expect(body.detail.length).toBeGreaterThan(10);
  expect(body.request_id).toBe(response.headers.get('x-request-id'));
  expect(JSON.stringify(body)).not.toMatch(/\/tmp\/|node_modules|at .*\.ts:/);
  return body;
}

function post(api: TestApi, path: string, body: string, contentType = 'application/json'): Promise<Response> {
  return fetch(`${api.baseUrl}${path}`, { method: 'POST', headers: { 'content-type': contentType }, body });
}

describe('HTTP contract (embedded mode)', () => {
  let api: TestApi;
  let completedId: string;

  beforeAll(async () => {
    api = await startTestApi({ MAX_JSON_BODY_BYTES: '2048', MAX_UPLOAD_BYTES: '200000', MAX_ARCHIVE_ENTRIES: '50' });
    const response = await postScan(api, { repo_path: api.repoDir });
    completedId = ((await response.json()) as { data: { scan_id: string } }).data.scan_id;
  });
  afterAll(() => api.close());

  describe('system endpoints', () => {
    it('GET /health answers ok with the version, outside the envelope', async () => {
      const response = await fetch(`${api.baseUrl}/health`);
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ status: 'ok', version: expect.any(String) });
    });

    it('/health is answered as Express would route it: HEAD, any case, a query; other methods are not found', async () => {
      const head = await fetch(`${api.baseUrl}/health`, { method: 'HEAD' });
      expect(head.status).toBe(200);
      expect(head.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(head.headers.get('x-request-id')).toMatch(UUID);
      expect(await head.text()).toBe('');
      const other = await fetch(`${api.baseUrl}/HEALTH?probe=1`);
      expect(await other.json()).toEqual({ status: 'ok', version: expect.any(String) });
      await expectError(await post(api, '/health', '{}'), 404, 'ROUTE_NOT_FOUND');
      await expectError(await fetch(`${api.baseUrl}/healthz`), 404, 'ROUTE_NOT_FOUND');
    });

    it('GET /ready checks the volume and says Redis is not used in embedded mode', async () => {
      const response = await fetch(`${api.baseUrl}/ready`);
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({
        status: 'ready',
        checks: { redis: 'not_used', volume: 'ok' },
        reasons: [],
      });
    });

    it('GET /metrics is Prometheus text with request latency by route', async () => {
      const response = await fetch(`${api.baseUrl}/metrics`);
      expect(response.status).toBe(200);
      const text = await response.text();
      expect(text).toContain('reposcan_http_request_duration_seconds_bucket');
      expect(text).toContain('reposcan_queue_waiting');
    });

    it('serves the checked-in openapi.yaml byte for byte, its JSON form, and Swagger UI at /docs', async () => {
      const checkedIn = await readFile(fileURLToPath(new URL('../../../openapi.yaml', import.meta.url)), 'utf8');
      expect(await (await fetch(`${api.baseUrl}/openapi.yaml`)).text()).toBe(checkedIn);
      const spec = (await (await fetch(`${api.baseUrl}/openapi.json`)).json()) as {
        openapi: string;
        paths: Record<string, unknown>;
      };
      expect(spec.openapi).toBe('3.1.0');
      expect(Object.keys(spec.paths)).toContain('/v1/scan');
      const docs = await fetch(`${api.baseUrl}/docs/`);
      expect(docs.status).toBe(200);
      expect(await docs.text()).toContain('swagger-ui');
    });

    it('every response carries X-Request-Id, and a safe incoming one is echoed', async () => {
      const fresh = await fetch(`${api.baseUrl}/health`);
      expect(fresh.headers.get('x-request-id')).toMatch(UUID);
      const echoed = await fetch(`${api.baseUrl}/v1/scans/not-a-uuid`, { headers: { 'x-request-id': 'trace-123' } });
      expect(echoed.headers.get('x-request-id')).toBe('trace-123');
      const probe = await fetch(`${api.baseUrl}/health`, { headers: { 'x-request-id': 'probe-7' } });
      expect(probe.headers.get('x-request-id')).toBe('probe-7');
      const unsafe = await fetch(`${api.baseUrl}/health`, { headers: { 'x-request-id': 'bad id with spaces' } });
      expect(unsafe.headers.get('x-request-id')).toMatch(UUID);
    });

    it('allows any origin by default (CORS)', async () => {
      const response = await fetch(`${api.baseUrl}/health`, { headers: { origin: 'https://app.example' } });
      expect(response.headers.get('access-control-allow-origin')).toBe('*');
      const preflight = await fetch(`${api.baseUrl}/v1/scan`, {
        method: 'OPTIONS',
        headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' },
      });
      expect(preflight.status).toBe(204);
    });
  });

  describe('paths with and without a trailing slash', () => {
    it.each(['/health/', '/v1/scans/{id}/', '/v1/summary/{id}/', '/v1/download/{id}/?format=md'])(
      '%s works',
      async (path) => {
        const response = await fetch(`${api.baseUrl}${path.replace('{id}', completedId)}`);
        expect(response.status).toBe(200);
      },
    );

    it('POST /v1/scan/ works', async () => {
      expect((await postScan({ ...api, baseUrl: api.baseUrl }, { repo_path: api.repoDir }, '/')).status).toBe(201);
    });
  });

  describe('scan_id in the path', () => {
    it.each([
      '..%2F..%2Fetc',
      '..%2F..%2Fetc%2Fpasswd',
      'abc%00def',
      'ABCDEF01-2345-4678-9abc-def012345678',
      'x'.repeat(5000),
    ])('%s is 400 INVALID_SCAN_ID on every route', async (id) => {
      for (const [method, path] of [
        ['GET', `/v1/scans/${id}`],
        ['GET', `/v1/scans/${id}/events`],
        ['GET', `/v1/summary/${id}`],
        ['GET', `/v1/download/${id}?format=txt`],
        ['DELETE', `/v1/cleanup/${id}`],
      ] as const) {
        await expectError(await fetch(`${api.baseUrl}${path}`, { method }), 400, 'INVALID_SCAN_ID');
      }
    });

    it('an unknown UUID is 404 SCAN_NOT_FOUND everywhere', async () => {
      const id = '3f0c2a51-8d7e-4b1a-9c3e-2f6d5b4a1e90';
      for (const [method, path] of [
        ['GET', `/v1/scans/${id}`],
        ['GET', `/v1/scans/${id}/events`],
        ['GET', `/v1/summary/${id}`],
        ['GET', `/v1/download/${id}?format=txt`],
        ['DELETE', `/v1/cleanup/${id}`],
      ] as const) {
        await expectError(await fetch(`${api.baseUrl}${path}`, { method }), 404, 'SCAN_NOT_FOUND');
      }
    });
  });

  describe('request validation', () => {
    it('malformed JSON is 400 INVALID_JSON', async () => {
      await expectError(await post(api, '/v1/scan', '{"repo_path":'), 400, 'INVALID_JSON');
    });
    it('JSON that is not an object (null, a number, a string, an array) is 400 INVALID_REQUEST saying so', async () => {
      for (const path of ['/v1/scan', '/v1/inspect'])
        for (const body of ['null', '42', '"repo"', '[]']) {
          const error = await expectError(await post(api, path, body), 400, 'INVALID_REQUEST');
          expect(error.detail, `${path} ${body}`).toBe('The body must be a JSON object.');
        }
    });
    it('unknown fields are 400 INVALID_REQUEST naming them', async () => {
      const body = await expectError(
        await postScan(api, { repo_path: api.repoDir, colour: 'red' }),
        400,
        'INVALID_REQUEST',
      );
      expect(body.detail).toContain('"colour"');
    });
    it('wrong types are 400 INVALID_REQUEST', async () => {
      await expectError(await postScan(api, { repo_path: api.repoDir, lite: 'yes' }), 400, 'INVALID_REQUEST');
      await expectError(await postScan(api, { repo_path: 42 }), 400, 'INVALID_REQUEST');
      await expectError(await postScan(api, { repo_path: api.repoDir, tree_depth: -1 }), 400, 'INVALID_REQUEST');
    });
    it('a missing field is 400 INVALID_REQUEST saying it is required and what it takes', async () => {
      const scan = await expectError(await postScan(api, {}), 400, 'INVALID_REQUEST');
      expect(scan.detail).toBe('Fix the request body: repo_path is required (a string).');
      const download = await expectError(
        await fetch(`${api.baseUrl}/v1/download/${randomUUID()}`),
        400,
        'INVALID_REQUEST',
      );
      expect(download.detail).toBe('Fix the request query: format is required (one of "txt", "md", "json", "zip").');
      // Present but wrong is said as such.
      const wrong = await expectError(
        await fetch(`${api.baseUrl}/v1/download/${randomUUID()}?format=pdf`),
        400,
        'INVALID_REQUEST',
      );
      expect(wrong.detail).not.toContain('required');
      // Given twice is said as such, with what it takes.
      const twice = await expectError(
        await fetch(`${api.baseUrl}/v1/download/${randomUUID()}?format=txt&format=md`),
        400,
        'INVALID_REQUEST',
      );
      expect(twice.detail).toBe(
        'Fix the request query: format is given 2 times; send it once (one of "txt", "md", "json", "zip").',
      );
    });
    it('too many patterns are 400', async () => {
      await expectError(
        await postScan(api, { repo_path: api.repoDir, include_patterns: Array(51).fill('*.ts') }),
        400,
        'INVALID_REQUEST',
      );
    });
    it('a __proto__ key is just an unknown field', async () => {
      await expectError(
        await post(api, '/v1/scan', `{"repo_path":"${api.repoDir}","__proto__":{"polluted":true}}`),
        400,
        'INVALID_REQUEST',
      );
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });
    it('a body over MAX_JSON_BODY_BYTES is 413 BODY_TOO_LARGE', async () => {
      await expectError(
        await post(api, '/v1/scan', JSON.stringify({ repo_path: 'x'.repeat(5000) })),
        413,
        'BODY_TOO_LARGE',
      );
    });
    it('a body that is not JSON is 415', async () => {
      await expectError(await post(api, '/v1/scan', 'repo_path=x', 'text/plain'), 415, 'UNSUPPORTED_MEDIA_TYPE');
      await expectError(
        await post(api, '/v1/inspect', 'repo_path=x', 'application/x-www-form-urlencoded'),
        415,
        'UNSUPPORTED_MEDIA_TYPE',
      );
    });
    it.each(['ext::sh -c touch% /tmp/pwned', '--upload-pack=touch /tmp/x', 'relative/path', 'not a url'])(
      'repo_path %s is 400 INVALID_REPO_PATH',
      async (repoPath) => {
        await expectError(await postScan(api, { repo_path: repoPath }), 400, 'INVALID_REPO_PATH');
      },
    );
    it('a branch that looks like an option is 400', async () => {
      await expectError(
        await postScan(api, { repo_path: 'https://github.com/a/b', branch: '--upload-pack=x' }),
        400,
        'INVALID_REQUEST',
      );
    });
    it('an unknown download format is 400', async () => {
      await expectError(await fetch(`${api.baseUrl}/v1/download/${completedId}?format=pdf`), 400, 'INVALID_REQUEST');
      await expectError(await fetch(`${api.baseUrl}/v1/download/${completedId}`), 400, 'INVALID_REQUEST');
    });
  });

  describe('source policy', () => {
    it.each([
      ['file:///etc/passwd', 403, 'SCHEME_NOT_ALLOWED'],
      ['http://github.com/a/b', 403, 'SCHEME_NOT_ALLOWED'],
      ['https://user:token@github.com/a/b', 403, 'CREDENTIALS_IN_URL'],
      ['https://example.com/a/b', 403, 'HOST_NOT_ALLOWED'],
      ['https://127.0.0.1/a/b', 403, 'PRIVATE_ADDRESS'],
      ['https://[::ffff:127.0.0.1]/a/b', 403, 'PRIVATE_ADDRESS'],
      ['/etc', 403, 'OUTSIDE_ALLOWED_ROOTS'],
    ] as const)('%s is %i %s', async (repoPath, status, code) => {
      await expectError(await postScan(api, { repo_path: repoPath }), status, code);
    });
    it('a missing folder inside the allowed root is 422 LOCAL_PATH_NOT_FOUND', async () => {
      await expectError(
        await postScan(api, { repo_path: join(api.localRoot, 'missing') }),
        422,
        'LOCAL_PATH_NOT_FOUND',
      );
    });
    it('a prefix trick next to the allowed root is refused', async () => {
      await expectError(await postScan(api, { repo_path: `${api.localRoot}X` }), 403, 'OUTSIDE_ALLOWED_ROOTS');
    });
  });

  describe('artifacts', () => {
    it('serves each format with its content type, ETag and attachment disposition', async () => {
      const expected = {
        txt: 'text/plain; charset=utf-8',
        md: 'text/markdown; charset=utf-8',
        json: 'application/json',
      };
      for (const [format, type] of Object.entries(expected)) {
        const response = await fetch(`${api.baseUrl}/v1/download/${completedId}?format=${format}`);
        expect(response.status).toBe(200);
        expect(response.headers.get('content-type')).toBe(type);
        expect(response.headers.get('etag')).toMatch(/^"[0-9a-f]{64}"$/);
        expect(response.headers.get('content-disposition')).toMatch(/^attachment; filename=/);
      }
    });
    it('honours Range requests and If-None-Match', async () => {
      const full = await (await fetch(`${api.baseUrl}/v1/download/${completedId}?format=txt`)).text();
      const partial = await fetch(`${api.baseUrl}/v1/download/${completedId}?format=txt`, {
        headers: { range: 'bytes=0-9' },
      });
      expect(partial.status).toBe(206);
      expect(await partial.text()).toBe(full.slice(0, 10));
      const etag = (await fetch(`${api.baseUrl}/v1/download/${completedId}?format=txt`)).headers.get('etag') ?? '';
      expect(
        (await fetch(`${api.baseUrl}/v1/download/${completedId}?format=txt`, { headers: { 'if-none-match': etag } }))
          .status,
      ).toBe(304);
    });
    it('a failed If-Match or If-Unmodified-Since is 412 PRECONDITION_FAILED; a matching one sends the artifact', async () => {
      const url = `${api.baseUrl}/v1/download/${completedId}?format=txt`;
      const etag = (await fetch(url)).headers.get('etag') ?? '';
      for (const headers of [
        { 'if-match': '"0000"' } as Record<string, string>,
        { 'if-match': `W/${etag}` },
        { 'if-unmodified-since': 'Mon, 01 Jan 2001 00:00:00 GMT' },
        // If-Match decides when both are sent.
        { 'if-match': '"0000"', 'if-unmodified-since': new Date(Date.now() + 3_600_000).toUTCString() },
      ]) {
        const body = await expectError(await fetch(url, { headers }), 412, 'PRECONDITION_FAILED');
        expect(body.detail, JSON.stringify(headers)).toMatch(/If-Match or If-Unmodified-Since.*drop the header/);
      }
      for (const headers of [
        { 'if-match': etag } as Record<string, string>,
        { 'if-match': `"0000", ${etag}` },
        { 'if-match': '*' },
        { 'if-unmodified-since': new Date(Date.now() + 3_600_000).toUTCString() },
      ])
        expect((await fetch(url, { headers })).status, JSON.stringify(headers)).toBe(200);
    });
    it('a range past the end is 416 RANGE_NOT_SATISFIABLE, as JSON, with the size in Content-Range and nothing to save', async () => {
      const size = (await (await fetch(`${api.baseUrl}/v1/download/${completedId}?format=txt`)).arrayBuffer())
        .byteLength;
      const response = await fetch(`${api.baseUrl}/v1/download/${completedId}?format=txt`, {
        headers: { range: `bytes=${size + 100}-` },
      });
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(response.headers.get('content-disposition')).toBeNull();
      expect(response.headers.get('content-range')).toBe(`bytes */${size}`);
      await expectError(response, 416, 'RANGE_NOT_SATISFIABLE');
    });
    it('a zip that was not produced is 404 FORMAT_NOT_PRODUCED with a detail that says so', async () => {
      const body = await expectError(
        await fetch(`${api.baseUrl}/v1/download/${completedId}?format=zip`),
        404,
        'FORMAT_NOT_PRODUCED',
      );
      expect(body.detail).toContain('create_zip');
    });
    it('the summary holds metadata, never file contents', async () => {
      const response = await fetch(`${api.baseUrl}/v1/summary/${completedId}`);
      const text = await response.text();
      expect(response.status).toBe(200);
      expect(text).not.toContain('export function main');
      const body = JSON.parse(text) as { data: Record<string, unknown> };
      expect(Object.keys(body.data).sort()).toEqual(
        [
          'artifacts',
          'assets',
          'completed_at',
          'created_at',
          'encoding',
          'files',
          'options',
          'repository',
          'scan_id',
          'secrets',
          'skipped',
          'state',
          'summary',
          'timings',
        ].sort(),
      );
      // Secret detection ran (the default) and found nothing in the sample repository.
      expect(body.data.secrets).toEqual({ mode: 'redact', count: 0, findings: [], not_checked: [] });
    });
  });

  describe('summaries served again', () => {
    it('are byte-identical in data, and 404 once another process (the janitor, another API) removes the scan', async () => {
      const response = await postScan(api, { repo_path: api.repoDir });
      const scanId = ((await response.json()) as { data: { scan_id: string } }).data.scan_id;
      const read = async () => {
        const res = await fetch(`${api.baseUrl}/v1/summary/${scanId}`);
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
        return (await res.json()) as { status: string; message: string; data: { scan_id: string }; timestamp: string };
      };
      const first = await read();
      const again = await read();
      expect(again.data).toEqual(first.data);
      expect(again).toMatchObject({ status: 'success', message: `Summary of scan ${scanId}.` });
      expect(Date.parse(again.timestamp)).toBeGreaterThanOrEqual(Date.parse(first.timestamp));
      // Not through this API: its own cleanup path could simply forget what it kept.
      const store = new ScanStore({ dataDir: api.dataDir });
      await store.init();
      expect(await store.remove(scanId)).toBe(true);
      await expectError(await fetch(`${api.baseUrl}/v1/summary/${scanId}`), 404, 'SCAN_NOT_FOUND');
    });
  });

  describe('uploads', () => {
    it('a file that is not a zip is 415 NOT_A_ZIP and leaves nothing behind', async () => {
      const form = new FormData();
      form.append('file', new Blob(['#!/bin/sh\necho not a zip\n']), 'evil.zip');
      await expectError(await fetch(`${api.baseUrl}/v1/upload`, { method: 'POST', body: form }), 415, 'NOT_A_ZIP');
      expect(await readdir(join(api.dataDir, 'incoming'))).toEqual([]);
    });
    it('a wrong field name is 400 and a missing file is 400', async () => {
      const form = new FormData();
      form.append('archive', new Blob(['PK\x05\x06']), 'a.zip');
      await expectError(
        await fetch(`${api.baseUrl}/v1/upload`, { method: 'POST', body: form }),
        400,
        'INVALID_REQUEST',
      );
      await expectError(
        await fetch(`${api.baseUrl}/v1/upload`, { method: 'POST', body: new FormData() }),
        400,
        'INVALID_REQUEST',
      );
    });
    it('an upload over MAX_UPLOAD_BYTES is 413 UPLOAD_TOO_LARGE and leaves nothing behind', async () => {
      const form = new FormData();
      form.append('file', new Blob([new Uint8Array(300_000)]), 'big.zip');
      await expectError(
        await fetch(`${api.baseUrl}/v1/upload`, { method: 'POST', body: form }),
        413,
        'UPLOAD_TOO_LARGE',
      );
      expect(await readdir(join(api.dataDir, 'incoming'))).toEqual([]);
    });
    it('a JSON body is 415', async () => {
      await expectError(await post(api, '/v1/upload', '{}'), 415, 'UNSUPPORTED_MEDIA_TYPE');
    });
    const upload = (zip: Buffer, query = ''): Promise<Response> => {
      const form = new FormData();
      form.append('file', new Blob([new Uint8Array(zip)]), 'repo.zip');
      return fetch(`${api.baseUrl}/v1/upload${query}`, { method: 'POST', body: form });
    };
    const crafted = (name: string, spec: Record<string, unknown>): Buffer =>
      craftZip(join(api.dataDir, '..', name), spec);

    // Refused from the central directory before a scan exists, even with ?wait=false: no scan id,
    // nothing queued, nothing kept.
    it.each([
      [
        'a symlink entry to /etc/passwd',
        422,
        'UNSAFE_ARCHIVE',
        {
          entries: [
            { name: 'passwd', data: '/etc/passwd', mode: 0o120777 },
            { name: 'ok.txt', data: 'ok' },
          ],
        },
      ],
      ['a zip-slip name', 422, 'UNSAFE_ARCHIVE', { entries: [{ name: '../../evil.txt', data: 'x' }] }],
      [
        'README.md and readme.md',
        422,
        'UNSAFE_ARCHIVE',
        {
          entries: [
            { name: 'README.md', data: 'a' },
            { name: 'readme.md', data: 'b' },
          ],
        },
      ],
      [
        'an encrypted entry',
        422,
        'UNSAFE_ARCHIVE',
        { entries: [{ name: 'secret.txt', data: 'x' }], patches: [{ op: 'encrypt', index: 0 }] },
      ],
      [
        'a ratio bomb',
        413,
        'ARCHIVE_TOO_LARGE',
        { entries: [{ name: 'zeros.bin', zeros: 50 * 1024 * 1024, method: 'deflated' }] },
      ],
      ['more entries than MAX_ARCHIVE_ENTRIES (50)', 413, 'TOO_MANY_ENTRIES', { many: 51 }],
    ])('an upload with %s is %i %s at once, before any scan exists', async (_name, status, code, spec) => {
      const before = await readdir(join(api.dataDir, 'scans'));
      const body = await expectError(
        await upload(crafted(`${code}-${before.length}.zip`, spec), '?wait=false'),
        status,
        code,
      );
      expect(body.data).toBeUndefined();
      expect(await readdir(join(api.dataDir, 'scans'))).toEqual(before);
      expect(await readdir(join(api.dataDir, 'incoming'))).toEqual([]);
    });

    it('an archive whose data lies about its size fails the scan: 422 UNSAFE_ARCHIVE with data.scan_id, then download is 409 SCAN_FAILED', async () => {
      // Only inflating shows the lie, so it passes the central-directory check and fails in the worker.
      const liar = crafted('liar.zip', {
        entries: [
          { name: 'first.txt', data: 'fine' },
          { name: 'liar.bin', zeros: 1024 * 1024, method: 'deflated' },
        ],
        patches: [{ op: 'set-uncompressed', index: 1, size: 10 }],
      });
      const body = await expectError(await upload(liar), 422, 'UNSAFE_ARCHIVE');
      const scanId = body.data?.scan_id ?? '';
      expect(scanId).toMatch(UUID);
      const status = (await (await fetch(`${api.baseUrl}/v1/scans/${scanId}`)).json()) as {
        data: { state: string; error: { code: string } };
      };
      expect(status.data).toMatchObject({ state: 'failed', error: { code: 'UNSAFE_ARCHIVE' } });
      await expectError(await fetch(`${api.baseUrl}/v1/download/${scanId}?format=txt`), 409, 'SCAN_FAILED');
      await expectError(await fetch(`${api.baseUrl}/v1/summary/${scanId}`), 409, 'SCAN_FAILED');
    });
  });

  describe('inspect', () => {
    it('previews a local path and writes nothing under DATA_DIR', async () => {
      const before = await listTree(api.dataDir);
      const response = await post(
        api,
        '/v1/inspect',
        JSON.stringify({ repo_path: api.repoDir, exclude_patterns: ['*.csv'] }),
      );
      expect(response.status).toBe(200);
      const body = (await response.json()) as {
        status: string;
        data: {
          repository: { name: string; tree_summary: string };
          summary: { total_files: number; formatted: { total_size: string } };
          files: Array<{ path: string; subcategory: string; tokens_estimate: number; url: string }>;
        };
      };
      expect(body.status).toBe('success');
      expect(body.data.repository.name).toBe('sample');
      expect(body.data.repository.tree_summary).toContain('sample/');
      expect(body.data.files.map((f) => f.path)).not.toContain('data/table.csv');
      expect(body.data.files.length).toBe(body.data.summary.total_files);
      expect(body.data.files.find((f) => f.path === 'src/index.ts')).toMatchObject({ subcategory: 'code', url: '' });
      expect(await listTree(api.dataDir)).toEqual(before);
    });
    it('previews in a row agree, on the thread kept after a preview and on a new one after a failure', async () => {
      const preview = async (): Promise<unknown> => {
        const response = await post(api, '/v1/inspect', JSON.stringify({ repo_path: api.repoDir }));
        expect(response.status).toBe(200);
        return ((await response.json()) as { data: unknown }).data;
      };
      const first = await preview();
      expect(await preview()).toEqual(first);
      const failed = await post(api, '/v1/inspect', JSON.stringify({ repo_path: join(api.repoDir, 'no-such-folder') }));
      expect(failed.status).toBeGreaterThanOrEqual(400);
      expect(failed.status).toBeLessThan(500);
      expect(await preview()).toEqual(first);
    });
    it('refuses what scan refuses', async () => {
      await expectError(
        await post(api, '/v1/inspect', JSON.stringify({ repo_path: '/etc' })),
        403,
        'OUTSIDE_ALLOWED_ROOTS',
      );
      await expectError(
        await post(api, '/v1/inspect', JSON.stringify({ repo_path: api.repoDir, lite: true })),
        400,
        'INVALID_REQUEST',
      );
    });
  });

  describe('methods and routes', () => {
    it('a known path with the wrong method is 405 with Allow', async () => {
      const response = await fetch(`${api.baseUrl}/v1/scan`);
      await expectError(response, 405, 'METHOD_NOT_ALLOWED');
      expect(response.headers.get('allow')).toBe('POST');
      await expectError(await fetch(`${api.baseUrl}/v1/cleanup/${completedId}`), 405, 'METHOD_NOT_ALLOWED');
    });
    it('an unknown route is 404 ROUTE_NOT_FOUND in the envelope', async () => {
      await expectError(await fetch(`${api.baseUrl}/v2/scan`), 404, 'ROUTE_NOT_FOUND');
    });
  });
});

describe('HTTP contract: states and limits that need their own configuration', () => {
  it('a scan that is not finished is 409 SCAN_NOT_READY with Retry-After (API without a worker)', async () => {
    const api = await startTestApi({ ROLE: 'api', SCAN_WAIT_SECONDS: '1' });
    try {
      const accepted = await postScan(api, { repo_path: api.repoDir });
      expect(accepted.status).toBe(202);
      const { data } = (await accepted.json()) as { data: { scan_id: string; state: string } };
      expect(data.state).toBe('queued');
      for (const path of [`/v1/download/${data.scan_id}?format=txt`, `/v1/summary/${data.scan_id}`]) {
        const response = await fetch(`${api.baseUrl}${path}`);
        await expectError(response, 409, 'SCAN_NOT_READY');
        expect(response.headers.get('retry-after')).toBe('2');
      }
      // Cleanup of a queued scan cancels it and removes it from the queue and the volume.
      expect((await fetch(`${api.baseUrl}/v1/cleanup/${data.scan_id}`, { method: 'DELETE' })).status).toBe(200);
      await expectError(await fetch(`${api.baseUrl}/v1/scans/${data.scan_id}`), 404, 'SCAN_NOT_FOUND');
      expect(await api.runtime.transport.queue.jobState(data.scan_id)).toBe('absent');
    } finally {
      await api.close();
    }
  });

  it('beyond MAX_QUEUED_SCANS waiting scans a new one is 503 QUEUE_FULL and leaves nothing behind', async () => {
    const api = await startTestApi({ ROLE: 'api', SCAN_WAIT_SECONDS: '0', MAX_QUEUED_SCANS: '2' });
    try {
      for (let i = 0; i < 2; i++) expect((await postScan(api, { repo_path: api.repoDir })).status).toBe(202);
      const refused = await postScan(api, { repo_path: api.repoDir });
      await expectError(refused, 503, 'QUEUE_FULL');
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await readdir(join(api.dataDir, 'scans'))).toHaveLength(2);
    } finally {
      await api.close();
    }
  });

  it('an unexpected failure is a generic 500 INTERNAL_ERROR: no stack, no path, the request id to report', async () => {
    const api = await startTestApi({ ROLE: 'api', SCAN_WAIT_SECONDS: '0' });
    try {
      const { data } = (await (await postScan(api, { repo_path: api.repoDir })).json()) as {
        data: { scan_id: string };
      };
      await writeFile(join(api.dataDir, 'scans', data.scan_id, 'state.json'), '{"state": "half-written');
      const body = await expectError(await fetch(`${api.baseUrl}/v1/scans/${data.scan_id}`), 500, 'INTERNAL_ERROR');
      expect(body.detail).not.toMatch(/JSON|state\.json|position/);
      expect(body.detail).toContain(body.request_id);
    } finally {
      await api.close();
    }
  });

  it('with CORS_ORIGINS set, /health and every route allow exactly those origins', async () => {
    const api = await startTestApi({ CORS_ORIGINS: 'https://a.example,https://b.example' });
    try {
      for (const path of ['/health', '/v1/scans/not-a-uuid']) {
        const allowed = await fetch(`${api.baseUrl}${path}`, { headers: { origin: 'https://b.example' } });
        expect([path, allowed.headers.get('access-control-allow-origin'), allowed.headers.get('vary')]).toEqual([
          path,
          'https://b.example',
          'Origin',
        ]);
        const other = await fetch(`${api.baseUrl}${path}`, { headers: { origin: 'https://evil.example' } });
        expect([path, other.headers.get('access-control-allow-origin')]).toEqual([path, null]);
      }
    } finally {
      await api.close();
    }
  });

  it('over RATE_LIMIT_PER_MINUTE a client gets 429 RATE_LIMITED with Retry-After', async () => {
    const api = await startTestApi({ RATE_LIMIT_PER_MINUTE: '3' });
    try {
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await postScan(api, { repo_path: '/etc' })).status);
      expect(statuses).toEqual([403, 403, 403, 429]);
      const limited = await postScan(api, { repo_path: '/etc' });
      await expectError(limited, 429, 'RATE_LIMITED');
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      expect((await fetch(`${api.baseUrl}/health`)).status).toBe(200);
    } finally {
      await api.close();
    }
  });

  it('previews have their own budget: many inspects leave RATE_LIMIT_PER_MINUTE for scans untouched', async () => {
    const api = await startTestApi({ RATE_LIMIT_PER_MINUTE: '2', INSPECT_RATE_LIMIT_PER_MINUTE: '30' });
    try {
      // What a page typing a path sends: every prefix, most of them refused (outside the roots, not found).
      const prefixes = Array.from({ length: 30 }, (_, i) =>
        api.repoDir.slice(0, Math.max(1, Math.round(((i + 1) / 30) * api.repoDir.length))),
      );
      const statuses: number[] = [];
      for (const prefix of prefixes)
        statuses.push((await post(api, '/v1/inspect', JSON.stringify({ repo_path: prefix }))).status);
      expect(statuses).not.toContain(429);
      expect(statuses.at(-1)).toBe(200);
      const limited = await expectError(
        await post(api, '/v1/inspect', JSON.stringify({ repo_path: api.repoDir })),
        429,
        'RATE_LIMITED',
      );
      expect(limited.detail).toMatch(/previews.*limit 30 per minute/);

      // The scan budget is whole: both scans run, only a third is refused, and it names scans.
      expect((await postScan(api, { repo_path: api.repoDir })).status).toBe(201);
      expect((await postScan(api, { repo_path: api.repoDir })).status).toBe(201);
      const third = await expectError(await postScan(api, { repo_path: api.repoDir }), 429, 'RATE_LIMITED');
      expect(third.detail).toMatch(/scan or upload requests.*limit 2 per minute/);
      expect(Number((await postScan(api, { repo_path: api.repoDir })).headers.get('retry-after'))).toBeGreaterThan(0);
    } finally {
      await api.close();
    }
  });

  it('inspect slots: requests beyond INSPECT_CONCURRENCY get 429 INSPECT_BUSY', async () => {
    const api = await startTestApi({ INSPECT_CONCURRENCY: '1' });
    try {
      const responses = await Promise.all(
        Array.from({ length: 6 }, () => post(api, '/v1/inspect', JSON.stringify({ repo_path: api.repoDir }))),
      );
      const statuses = responses.map((r) => r.status).sort();
      expect(statuses).toContain(200);
      expect(statuses).toContain(429);
      const busy = responses.find((r) => r.status === 429);
      if (busy) await expectError(busy, 429, 'INSPECT_BUSY');
    } finally {
      await api.close();
    }
  });

  it('below the disk floor new work is 507 DISK_FULL', async () => {
    const api = await startTestApi({ MIN_FREE_DISK_RATIO: '0.9999' });
    try {
      await expectError(await postScan(api, { repo_path: api.repoDir }), 507, 'DISK_FULL');
      expect((await fetch(`${api.baseUrl}/ready`)).status).toBe(503);
    } finally {
      await api.close();
    }
  });

  it('local paths are 403 LOCAL_PATHS_DISABLED when ALLOWED_LOCAL_ROOTS is unset', async () => {
    const api = await startTestApi({ ALLOWED_LOCAL_ROOTS: '' });
    try {
      await expectError(await postScan(api, { repo_path: api.repoDir }), 403, 'LOCAL_PATHS_DISABLED');
    } finally {
      await api.close();
    }
  });

  it('with Redis unreachable, scans are 503 QUEUE_UNAVAILABLE within 2 s while /health stays up', async () => {
    const api = await startTestApi({ REDIS_URL: 'redis://127.0.0.1:1', ROLE: 'api' });
    try {
      const started = Date.now();
      const response = await postScan(api, { repo_path: api.repoDir });
      expect(Date.now() - started).toBeLessThan(2000);
      await expectError(response, 503, 'QUEUE_UNAVAILABLE');
      expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await readdir(join(api.dataDir, 'scans'))).toEqual([]);
      expect((await fetch(`${api.baseUrl}/health`)).status).toBe(200);
      const ready = await fetch(`${api.baseUrl}/ready`);
      expect(ready.status).toBe(503);
      expect(await ready.json()).toMatchObject({ checks: { redis: 'down' } });
    } finally {
      await api.close();
    }
  });
});

async function listTree(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true });
  return entries.map(String).sort();
}
