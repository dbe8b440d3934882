// What a client can get wrong or give up on, over raw HTTP: a multipart body the parser cannot
// read, a file name full of control characters, a preview it abandons, headers sent too slowly.
// None of them is a failure of ours: each gets a 4xx, a clean name, a 408 when its time is up,
// or nothing once it is gone, and no error in the log.
import { connect } from 'node:net';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBlackHoleServer } from '../../../packages/sources/test/remote/helpers/git-http-server.js';
import { processesMentioning } from '../../../packages/sources/test/remote/helpers/processes.js';
import { startTestApi } from './support/test-runtime.js';
import type { TestApi } from './support/test-runtime.js';
import { buildZip } from './support/zips.js';

interface LogLine {
  level: number;
  msg: string;
  path?: string;
}

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** A logger at info that keeps every line, for the test to read. */
function capturingLogger(): { log: pino.Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  return { log: pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line) as LogLine) }), lines };
}

function parseResponse(text: string): RawResponse {
  const end = text.indexOf('\r\n\r\n');
  const [statusLine = '', ...headerLines] = text.slice(0, end).split('\r\n');
  const headers = Object.fromEntries(
    headerLines.map((line) => [
      line.slice(0, line.indexOf(':')).toLowerCase(),
      line.slice(line.indexOf(':') + 1).trim(),
    ]),
  );
  return { status: Number(statusLine.split(' ')[1]), headers, body: text.slice(end + 4) };
}

/** One request written to a socket exactly as given; the answer is whatever comes back before the server closes. */
function rawRequest(api: TestApi, head: string, body: Buffer): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(new URL(api.baseUrl).port), '127.0.0.1', () =>
      socket.write(Buffer.concat([Buffer.from(head, 'latin1'), body])),
    );
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(parseResponse(Buffer.concat(chunks).toString('utf8'))));
  });
}

function uploadHead(contentType: string, length: number): string {
  return `POST /v1/upload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${contentType}\r\nContent-Length: ${length}\r\nConnection: close\r\n\r\n`;
}

/** A multipart body with one file part; `contentDisposition` as sent (bytes, UTF-8). */
function filePart(contentDisposition: string, content: Buffer, closing = true): Buffer {
  return Buffer.concat([
    Buffer.from(`--XYZ\r\nContent-Disposition: ${contentDisposition}\r\nContent-Type: application/zip\r\n\r\n`, 'utf8'),
    content,
    Buffer.from(closing ? '\r\n--XYZ--\r\n' : ''),
  ]);
}

describe('uploads and their names', () => {
  let api: TestApi;
  let zip: Buffer;
  const logs = capturingLogger();
  beforeAll(async () => {
    api = await startTestApi({ LOG_LEVEL: 'info' }, { log: logs.log });
    // Files at the top: the upload's own name names the repository.
    zip = await buildZip(join(api.dataDir, '..', 'named.zip'), { 'a.txt': 'hello\n', 'docs/b.md': '# b\n' });
  });
  afterAll(() => api?.close());

  describe('a multipart body the parser cannot read is 400 INVALID_MULTIPART, never a 500', () => {
    it.each([
      [
        'has no boundary in its Content-Type',
        'multipart/form-data',
        () => filePart('form-data; name="file"; filename="repo.zip"', zip),
      ],
      ['is empty', 'multipart/form-data; boundary=XYZ', () => Buffer.alloc(0)],
      // Large enough that the part is being written under incoming/ when the body ends.
      [
        'ends before its closing boundary',
        'multipart/form-data; boundary=XYZ',
        () =>
          filePart(
            'form-data; name="file"; filename="repo.zip"',
            Buffer.concat([zip, Buffer.alloc(256 * 1024, 7)]),
            false,
          ),
      ],
      [
        'has a raw control character in a part header',
        'multipart/form-data; boundary=XYZ',
        () => filePart('form-data; name="file"; filename="evil\u001b[31m.zip"', zip),
      ],
    ])('a body that %s', async (_case, contentType, body) => {
      const scansBefore = await readdir(join(api.dataDir, 'scans'));
      const errorsBefore = logs.lines.filter((l) => l.level >= 50).length;
      const bytes = body();
      const response = await rawRequest(api, uploadHead(contentType, bytes.length), bytes);
      const envelope = JSON.parse(response.body) as {
        status: string;
        code: string;
        detail: string;
        request_id: string;
      };
      expect({ status: response.status, code: envelope.code }).toEqual({ status: 400, code: 'INVALID_MULTIPART' });
      expect(response.headers['content-type']).toMatch(/^application\/json/);
      expect(envelope.detail).toMatch(/boundary.*curl -F file=@repo\.zip/);
      expect(envelope.request_id).toBe(response.headers['x-request-id']);
      // Nothing received is kept, no scan exists, and the log holds no error.
      expect(await readdir(join(api.dataDir, 'incoming'))).toEqual([]);
      expect(await readdir(join(api.dataDir, 'scans'))).toEqual(scansBefore);
      expect(logs.lines.filter((l) => l.level >= 50).slice(errorsBefore)).toEqual([]);
    });
  });

  describe('an upload name with control characters or a folder part names the repository cleanly', () => {
    const scanned = async (bytes: Buffer): Promise<{ repoName: string; disposition: string }> => {
      const response = await rawRequest(api, uploadHead('multipart/form-data; boundary=XYZ', bytes.length), bytes);
      const envelope = JSON.parse(response.body) as { code?: string; data: { scan_id: string; repo_name: string } };
      expect({ status: response.status, code: envelope.code }).toEqual({ status: 201, code: undefined });
      const download = await fetch(`${api.baseUrl}/v1/download/${envelope.data.scan_id}?format=md`);
      expect(download.status).toBe(200);
      await download.arrayBuffer();
      return { repoName: envelope.data.repo_name, disposition: download.headers.get('content-disposition') ?? '' };
    };

    it.each([
      // RFC 5987 lets a name carry any byte: ESC [31m would colour a terminal that prints it.
      ['an escape sequence (filename*)', `form-data; name="file"; filename*=UTF-8''evil%1B%5B31m.zip`, 'evil_[31m'],
      [
        'NUL, a line feed and a right-to-left override',
        `form-data; name="file"; filename*=UTF-8''a%00b%0Ac%E2%80%AEd.zip`,
        'a_b_c_d',
      ],
      [
        'a Windows path and a right-to-left override, in UTF-8',
        'form-data; name="file"; filename="C:\\Users\\me\\caf\u00e9\u202egnp.zip"',
        'caf\u00e9_gnp',
      ],
    ])('%s', async (_case, contentDisposition, repoName) => {
      const result = await scanned(filePart(contentDisposition, zip));
      expect(result.repoName).toBe(repoName);
      // The download is named after it too, with nothing for a terminal or a header to obey.
      expect(result.disposition).not.toMatch(/\p{Cc}/u);
      expect(decodeURIComponent(result.disposition)).toContain(`${repoName}.md`);
    });

    it('a line feed a browser escaped as %0A (FormData, as fetch sends it)', async () => {
      const form = new FormData();
      form.append('file', new Blob([new Uint8Array(zip)]), 'line\nbreak.zip');
      const response = await fetch(`${api.baseUrl}/v1/upload`, { method: 'POST', body: form });
      const envelope = (await response.json()) as { data: { repo_name: string } };
      expect(response.status).toBe(201);
      expect(envelope.data.repo_name).toBe('line_break');
    });
  });
});

describe('a preview abandoned by its client', () => {
  it('is logged as the request it was, at info, never as an error', async () => {
    const blackHole = await startBlackHoleServer();
    const logs = capturingLogger();
    const api = await startTestApi(
      {
        GIT_ALLOW_HTTP: 'true',
        GIT_ALLOW_PRIVATE_HOSTS: 'true',
        GIT_ALLOWED_HOSTS: '127.0.0.1',
        CLONE_TIMEOUT_SECONDS: '60',
        INSPECT_TIMEOUT_SECONDS: '60',
      },
      { log: logs.log },
    );
    try {
      const client = new AbortController();
      const request = fetch(`${api.baseUrl}/v1/inspect`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ repo_path: `${blackHole.origin}/acme/widgets` }),
        signal: client.signal,
      }).catch(() => 'aborted');
      // The preview is under way (its git waits on a server that never answers) when the client leaves.
      await expect
        .poll(() => processesMentioning(blackHole.origin).length, { timeout: 20_000, interval: 50 })
        .toBeGreaterThan(0);
      client.abort();
      expect(await request).toBe('aborted');
      const abandoned = (): LogLine[] => logs.lines.filter((l) => l.msg === 'preview abandoned: the client went away');
      await expect.poll(() => abandoned().length, { timeout: 15_000, interval: 50 }).toBe(1);
      expect(abandoned()[0]).toMatchObject({ level: 30, path: '/v1/inspect' });
      expect(logs.lines.filter((l) => l.level >= 40)).toEqual([]);
    } finally {
      await api.close();
      await blackHole.close();
    }
  });
});

describe('a client that sends its headers slowly', () => {
  // README: slow clients are cut off by the header timeout, 30 s. Node enforces it when it checks
  // its connections; at its default (every 30 s) the cut came after 30 to 60 s, on a fresh server
  // after 60. This test takes about 30 s: the promise is about time, so time is what it measures.
  it('is answered 408 and cut off 30 s after it connected, give or take the one-second check', async () => {
    const api = await startTestApi();
    try {
      const outcome = await new Promise<{ response: string; seconds: number }>((resolve, reject) => {
        const started = performance.now();
        const socket = connect(Number(new URL(api.baseUrl).port), '127.0.0.1');
        let response = '';
        let sent = 0;
        // One header line a second, for at most 45 s: the request never completes on its own.
        const drip = setInterval(() => {
          if (++sent > 45) socket.destroy();
          else socket.write(`X-Slow-${sent}: still coming\r\n`);
        }, 1000);
        socket.on('connect', () => socket.write('POST /v1/scan HTTP/1.1\r\nHost: 127.0.0.1\r\n'));
        socket.on('data', (chunk: Buffer) => (response += chunk.toString('latin1')));
        socket.on('error', () => {}); // a write after the server hung up
        socket.on('close', () => {
          clearInterval(drip);
          resolve({ response, seconds: (performance.now() - started) / 1000 });
        });
        setTimeout(() => reject(new Error('still connected after 50 s')), 50_000).unref();
      });
      expect(outcome.response.split('\r\n')[0]).toBe('HTTP/1.1 408 Request Timeout');
      expect(outcome.seconds).toBeGreaterThanOrEqual(29.9);
      expect(outcome.seconds).toBeLessThan(35);
    } finally {
      await api.close();
    }
  });
});
