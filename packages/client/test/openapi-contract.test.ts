// The live contract: a real API answers every operation of openapi.yaml, success and error
// cases, and each answer (status, content type, body) must be one the spec describes. The
// typed client is generated from that spec, so this is what makes its types true.
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { purgeQueuePrefix } from '@reposcan/queue';
import { startTestApi } from '../../../apps/api/test/support/test-runtime.js';
import type { TestApi } from '../../../apps/api/test/support/test-runtime.js';
import { buildZip, craftZip } from '../../../apps/api/test/support/zips.js';
import { parseEventStream } from '../src/sse.js';
import { OpenApiValidator } from './support/openapi-validator.js';

const SPEC = new URL('../../../openapi.yaml', import.meta.url);
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

interface Envelope {
  status: string;
  code?: string;
  data: Record<string, unknown> & { scan_id?: string };
}

describe('live API responses match openapi.yaml', () => {
  let spec: OpenApiValidator;
  /** Embedded mode: scans run to completion. */
  let api: TestApi;
  /** API role on Redis with no worker: every scan stays queued, so "not ready" is certain. */
  let queuedApi: TestApi;
  const prefix = `reposcan-contract-${randomUUID().slice(0, 8)}`;
  let completedId: string;
  let zipScanId: string;
  let failedId: string;
  let queuedId: string;

  beforeAll(async () => {
    spec = await OpenApiValidator.load(SPEC);
    [api, queuedApi] = await Promise.all([
      startTestApi({ MAX_JSON_BODY_BYTES: '2048', MAX_UPLOAD_BYTES: '200000' }),
      startTestApi({ REDIS_URL, ROLE: 'api', QUEUE_PREFIX: prefix }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([api?.close(), queuedApi?.close()]);
    await purgeQueuePrefix(REDIS_URL, prefix);
  });

  /** Send a request, check the answer against the spec, and return what it carried. */
  async function call(base: TestApi, method: string, template: string, url: string, init: RequestInit = {}) {
    const response = await fetch(`${base.baseUrl}${url}`, { ...init, method });
    const checked = await spec.check(method, template, response);
    return { ...checked, headers: response.headers, envelope: checked.body as Envelope };
  }
  const json = (body: unknown): RequestInit => ({
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  async function expectCode(
    promise: Promise<{ status: number; envelope: Envelope }>,
    status: number,
    code: string,
  ): Promise<Envelope> {
    const answer = await promise;
    expect({ status: answer.status, code: answer.envelope.code }).toEqual({ status, code });
    return answer.envelope;
  }
  async function zipForm(name: string, entries: Record<string, string>): Promise<FormData> {
    const bytes = await buildZip(join(api.dataDir, '..', name), entries);
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(bytes)]), name);
    return form;
  }

  describe('system', () => {
    it('GET /health, /ready, /metrics', async () => {
      expect((await call(api, 'GET', '/health', '/health')).status).toBe(200);
      expect((await call(api, 'GET', '/ready', '/ready')).body).toMatchObject({ status: 'ready' });
      expect((await call(queuedApi, 'GET', '/ready', '/ready')).body).toMatchObject({
        status: 'ready',
        checks: { redis: 'ok' },
      });
      expect(String((await call(api, 'GET', '/metrics', '/metrics')).body)).toContain('# TYPE');
    });
  });

  describe('POST /v1/scan', () => {
    it('201 with the result when it finishes in time, 202 with Location when asked not to wait', async () => {
      const done = await call(api, 'POST', '/v1/scan', '/v1/scan', json({ repo_path: api.repoDir }));
      expect(done.status).toBe(201);
      completedId = String(done.envelope.data.scan_id);
      const zipped = await call(
        api,
        'POST',
        '/v1/scan',
        '/v1/scan',
        json({ repo_path: api.repoDir, create_zip: true }),
      );
      expect(zipped.status).toBe(201);
      zipScanId = String(zipped.envelope.data.scan_id);

      const queued = await call(
        queuedApi,
        'POST',
        '/v1/scan',
        '/v1/scan?wait=false',
        json({ repo_path: queuedApi.repoDir }),
      );
      // With the code: a refusal (503) says which one. Sent before the scans below that do not
      // wait: both APIs share this process, and those scans' work would delay this enqueue.
      expect({ status: queued.status, code: queued.envelope.code }).toEqual({ status: 202, code: undefined });
      queuedId = String(queued.envelope.data.scan_id);

      const accepted = await call(api, 'POST', '/v1/scan', '/v1/scan?wait=false', json({ repo_path: api.repoDir }));
      expect({ status: accepted.status, code: accepted.envelope.code }).toEqual({ status: 202, code: undefined });
      expect(accepted.headers.get('location')).toBe(accepted.envelope.data.status_url);
      const preferred = await call(api, 'POST', '/v1/scan', '/v1/scan', {
        ...json({ repo_path: api.repoDir }),
        headers: { 'content-type': 'application/json', prefer: 'respond-async' },
      });
      expect(preferred.status).toBe(202);
    });

    it('400 malformed JSON, unknown field, bad repo_path', async () => {
      await expectCode(
        call(api, 'POST', '/v1/scan', '/v1/scan', {
          headers: { 'content-type': 'application/json' },
          body: '{"repo_path":',
        }),
        400,
        'INVALID_JSON',
      );
      await expectCode(
        call(api, 'POST', '/v1/scan', '/v1/scan', json({ repo_path: api.repoDir, colour: 'blue' })),
        400,
        'INVALID_REQUEST',
      );
      await expectCode(
        call(api, 'POST', '/v1/scan', '/v1/scan', json({ repo_path: 'ext::sh -c id' })),
        400,
        'INVALID_REPO_PATH',
      );
    });

    it('403 outside the allowed roots, 422 a missing folder inside them', async () => {
      await expectCode(
        call(api, 'POST', '/v1/scan', '/v1/scan', json({ repo_path: '/etc' })),
        403,
        'OUTSIDE_ALLOWED_ROOTS',
      );
      await expectCode(
        call(api, 'POST', '/v1/scan', '/v1/scan', json({ repo_path: join(api.localRoot, 'missing') })),
        422,
        'LOCAL_PATH_NOT_FOUND',
      );
    });

    it('413 a body over MAX_JSON_BODY_BYTES, 415 a body that is not JSON', async () => {
      await expectCode(
        call(api, 'POST', '/v1/scan', '/v1/scan', json({ repo_path: api.repoDir, exclude_dirs: ['x'.repeat(3000)] })),
        413,
        'BODY_TOO_LARGE',
      );
      await expectCode(
        call(api, 'POST', '/v1/scan', '/v1/scan', { headers: { 'content-type': 'text/plain' }, body: 'hello' }),
        415,
        'UNSUPPORTED_MEDIA_TYPE',
      );
    });
  });

  describe('POST /v1/upload', () => {
    it('201 and 202', async () => {
      const done = await call(api, 'POST', '/v1/upload', '/v1/upload?lite=true', {
        body: await zipForm('ok.zip', { 'demo/README.md': '# Demo\n' }),
      });
      expect(done.status).toBe(201);
      const accepted = await call(api, 'POST', '/v1/upload', '/v1/upload?wait=false', {
        body: await zipForm('later.zip', { 'a.txt': 'a\n' }),
      });
      expect(accepted.status).toBe(202);
    });

    it('422 an unsafe archive (refused before a scan exists, or failing the scan with its id), 400 no file, 413 too large, 415 not multipart', async () => {
      const unsafe = await expectCode(
        call(api, 'POST', '/v1/upload', '/v1/upload', {
          body: await zipForm('dup.zip', { 'README.md': 'a', 'readme.md': 'b' }),
        }),
        422,
        'UNSAFE_ARCHIVE',
      );
      expect(unsafe.data).toBeUndefined();
      // A lie only the data shows passes the upload's check and fails the scan in the worker.
      const liar = new FormData();
      liar.append(
        'file',
        new Blob([
          new Uint8Array(
            craftZip(join(tmpdir(), `liar-${process.pid}.zip`), {
              entries: [
                { name: 'repo/README.md', data: '# fine\n' },
                { name: 'repo/liar.bin', zeros: 1024 * 1024, method: 'deflated' },
              ],
              patches: [{ op: 'set-uncompressed', index: 1, size: 10 }],
            }),
          ),
        ]),
        'liar.zip',
      );
      const failed = await expectCode(
        call(api, 'POST', '/v1/upload', '/v1/upload', { body: liar }),
        422,
        'UNSAFE_ARCHIVE',
      );
      failedId = String(failed.data?.scan_id);
      await expectCode(call(api, 'POST', '/v1/upload', '/v1/upload', { body: new FormData() }), 400, 'INVALID_REQUEST');
      const big = new FormData();
      big.append('file', new Blob([new Uint8Array(300_000)]), 'big.zip');
      await expectCode(call(api, 'POST', '/v1/upload', '/v1/upload', { body: big }), 413, 'UPLOAD_TOO_LARGE');
      await expectCode(call(api, 'POST', '/v1/upload', '/v1/upload', json({})), 415, 'UNSUPPORTED_MEDIA_TYPE');
    });
  });

  describe('POST /v1/inspect', () => {
    it('200, 400, 403, 413, 415, 422', async () => {
      const preview = await call(
        api,
        'POST',
        '/v1/inspect',
        '/v1/inspect',
        json({ repo_path: api.repoDir, include_patterns: ['*.md'] }),
      );
      expect(preview.status).toBe(200);
      await expectCode(
        call(api, 'POST', '/v1/inspect', '/v1/inspect', json({ repo_path: api.repoDir, lite: true })),
        400,
        'INVALID_REQUEST',
      );
      await expectCode(
        call(api, 'POST', '/v1/inspect', '/v1/inspect', json({ repo_path: '/etc' })),
        403,
        'OUTSIDE_ALLOWED_ROOTS',
      );
      await expectCode(
        call(
          api,
          'POST',
          '/v1/inspect',
          '/v1/inspect',
          json({ repo_path: api.repoDir, include_patterns: ['y'.repeat(3000)] }),
        ),
        413,
        'BODY_TOO_LARGE',
      );
      await expectCode(
        call(api, 'POST', '/v1/inspect', '/v1/inspect', { headers: { 'content-type': 'text/plain' }, body: 'x' }),
        415,
        'UNSUPPORTED_MEDIA_TYPE',
      );
      await expectCode(
        call(api, 'POST', '/v1/inspect', '/v1/inspect', json({ repo_path: join(api.localRoot, 'missing') })),
        422,
        'LOCAL_PATH_NOT_FOUND',
      );
    });
  });

  describe('GET /v1/scans/{scan_id}', () => {
    it('200 completed, failed and queued; 400 a bad id; 404 an unknown one', async () => {
      const path = '/v1/scans/{scan_id}';
      expect((await call(api, 'GET', path, `/v1/scans/${completedId}`)).envelope.data).toMatchObject({
        state: 'completed',
      });
      expect((await call(api, 'GET', path, `/v1/scans/${failedId}`)).envelope.data).toMatchObject({
        state: 'failed',
        error: { code: 'UNSAFE_ARCHIVE' },
      });
      expect((await call(queuedApi, 'GET', path, `/v1/scans/${queuedId}`)).envelope.data).toMatchObject({
        state: 'queued',
      });
      await expectCode(call(api, 'GET', path, '/v1/scans/not-a-uuid'), 400, 'INVALID_SCAN_ID');
      await expectCode(call(api, 'GET', path, `/v1/scans/${UNKNOWN_ID}`), 404, 'SCAN_NOT_FOUND');
    });
  });

  describe('GET /v1/scans/{scan_id}/events', () => {
    it('200 text/event-stream whose every event carries a ScanStatus; 400; 404', async () => {
      const path = '/v1/scans/{scan_id}/events';
      const stream = await call(api, 'GET', path, `/v1/scans/${completedId}/events`);
      const events = [];
      for await (const event of parseEventStream(new Blob([String(stream.body)]).stream())) events.push(event);
      expect(events.map((e) => e.event)).toEqual(['state']);
      const status = spec.component('ScanStatus');
      for (const event of events) status(JSON.parse(event.data) as unknown);

      // A queued scan's stream stays open: its first event must already be a valid status.
      const controller = new AbortController();
      const open = await fetch(`${queuedApi.baseUrl}/v1/scans/${queuedId}/events`, { signal: controller.signal });
      expect(open.headers.get('content-type')).toMatch(/^text\/event-stream\b/);
      const first = await parseEventStream(open.body!).next();
      controller.abort();
      if (first.done) throw new Error('the stream of a queued scan ended without an event');
      const firstStatus = JSON.parse(first.value.data) as unknown;
      status(firstStatus);
      expect(firstStatus).toMatchObject({ state: 'queued' });

      await expectCode(call(api, 'GET', path, '/v1/scans/nope/events'), 400, 'INVALID_SCAN_ID');
      await expectCode(call(api, 'GET', path, `/v1/scans/${UNKNOWN_ID}/events`), 404, 'SCAN_NOT_FOUND');
    });
  });

  describe('GET /v1/download/{scan_id}', () => {
    const path = '/v1/download/{scan_id}';
    it('200 for every produced format, 206 for a range, 304 for a matching ETag', async () => {
      for (const format of ['txt', 'md', 'json', 'zip']) {
        const answer = await call(api, 'GET', path, `/v1/download/${zipScanId}?format=${format}`);
        expect(answer.status).toBe(200);
      }
      const partial = await call(api, 'GET', path, `/v1/download/${completedId}?format=md`, {
        headers: { range: 'bytes=0-9' },
      });
      expect(partial.status).toBe(206);
      expect(String(partial.body)).toHaveLength(10);
      const etag = (await fetch(`${api.baseUrl}/v1/download/${completedId}?format=json`)).headers.get('etag')!;
      const notModified = await call(api, 'GET', path, `/v1/download/${completedId}?format=json`, {
        headers: { 'if-none-match': etag },
      });
      expect(notModified.status).toBe(304);
    });

    it('400 bad format or id, 404 unknown scan or format not produced, 409 not ready or failed', async () => {
      await expectCode(call(api, 'GET', path, `/v1/download/${completedId}?format=pdf`), 400, 'INVALID_REQUEST');
      await expectCode(call(api, 'GET', path, '/v1/download/..%2F..%2Fetc?format=txt'), 400, 'INVALID_SCAN_ID');
      await expectCode(call(api, 'GET', path, `/v1/download/${UNKNOWN_ID}?format=txt`), 404, 'SCAN_NOT_FOUND');
      await expectCode(call(api, 'GET', path, `/v1/download/${completedId}?format=zip`), 404, 'FORMAT_NOT_PRODUCED');
      const notReady = await call(queuedApi, 'GET', path, `/v1/download/${queuedId}?format=txt`);
      expect({ status: notReady.status, code: notReady.envelope.code }).toEqual({
        status: 409,
        code: 'SCAN_NOT_READY',
      });
      expect(notReady.headers.get('retry-after')).toMatch(/^\d+$/);
      await expectCode(call(api, 'GET', path, `/v1/download/${failedId}?format=txt`), 409, 'SCAN_FAILED');
    });

    // Found by this suite: it answered 400 with the artifact's Content-Type over a JSON envelope.
    it('416 for an unsatisfiable range, as a JSON error envelope with the size in Content-Range', async () => {
      await expectCode(
        call(api, 'GET', path, `/v1/download/${completedId}?format=txt`, { headers: { range: 'bytes=99999999-' } }),
        416,
        'RANGE_NOT_SATISFIABLE',
      );
      const raw = await fetch(`${api.baseUrl}/v1/download/${completedId}?format=txt`, {
        headers: { range: 'bytes=99999999-' },
      });
      expect(raw.headers.get('content-range')).toMatch(/^bytes \*\/\d+$/);
    });
  });

  describe('GET /v1/summary/{scan_id}', () => {
    it('200, 400, 404, 409 not ready, 409 failed', async () => {
      const path = '/v1/summary/{scan_id}';
      expect((await call(api, 'GET', path, `/v1/summary/${completedId}`)).envelope.data).toMatchObject({
        scan_id: completedId,
        state: 'completed',
      });
      await expectCode(call(api, 'GET', path, '/v1/summary/NOT-A-UUID'), 400, 'INVALID_SCAN_ID');
      await expectCode(call(api, 'GET', path, `/v1/summary/${UNKNOWN_ID}`), 404, 'SCAN_NOT_FOUND');
      await expectCode(call(queuedApi, 'GET', path, `/v1/summary/${queuedId}`), 409, 'SCAN_NOT_READY');
      await expectCode(call(api, 'GET', path, `/v1/summary/${failedId}`), 409, 'SCAN_FAILED');
    });
  });

  describe('DELETE /v1/cleanup/{scan_id}', () => {
    it('200 for a finished and a queued scan, then 404; 400 a bad id', async () => {
      const path = '/v1/cleanup/{scan_id}';
      expect((await call(api, 'DELETE', path, `/v1/cleanup/${failedId}`)).envelope.data).toEqual({ scan_id: failedId });
      expect((await call(queuedApi, 'DELETE', path, `/v1/cleanup/${queuedId}`)).status).toBe(200);
      await expectCode(call(queuedApi, 'DELETE', path, `/v1/cleanup/${queuedId}`), 404, 'SCAN_NOT_FOUND');
      await expectCode(call(api, 'DELETE', path, '/v1/cleanup/x'), 400, 'INVALID_SCAN_ID');
    });
  });

  it('exercised every operation of the spec with a success answer', async () => {
    const { parse } = await import('yaml');
    const { readFile } = await import('node:fs/promises');
    const doc = parse(await readFile(SPEC, 'utf8')) as { paths: Record<string, Record<string, unknown>> };
    const operations = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
    );
    const succeeded = new Set([...spec.seen].filter((s) => / 2\d\d$/.test(s)).map((s) => s.replace(/ \d{3}$/, '')));
    expect(operations.filter((op) => !succeeded.has(op))).toEqual([]);
  });
});
