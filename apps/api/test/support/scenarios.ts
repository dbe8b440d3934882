import { createHash } from 'node:crypto';
import { access, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { p99, probeWhileRunning } from './probe-latency.js';
import { readEvents } from './sse.js';
import { buildZip } from './zips.js';
import type { TestApi } from './test-runtime.js';

interface Envelope<T = Record<string, unknown>> {
  status: string;
  message: string;
  data: T;
  code?: string;
  detail?: string;
}

async function json<T = Record<string, unknown>>(response: Response): Promise<Envelope<T>> {
  return (await response.json()) as Envelope<T>;
}

export function postScan(api: TestApi, body: unknown, query = ''): Promise<Response> {
  return fetch(`${api.baseUrl}/v1/scan${query}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

/**
 * Submits a scan of the API's repository until it is accepted (202): a submit refused with 503
 * while Redis fails over was never accepted, so it is simply tried again.
 */
export async function enqueueScan(api: TestApi): Promise<string> {
  for (;;) {
    const response = await postScan(api, { repo_path: api.repoDir }, '?wait=false');
    if (response.status === 202) return (await json<{ scan_id: string }>(response)).data.scan_id;
    expect(response.status).toBe(503);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

interface ScanResultData {
  scan_id: string;
  repo_name: string;
  num_textual_files: number;
  num_non_textual_files: number;
  artifacts: Record<string, { url: string; bytes: number; sha256: string }>;
  artifact_dir: string;
  summary: { total_files: number; estimated_tokens: number };
}

/** Polls GET /v1/scans/{id} until the scan is completed, failed or cancelled. */
export async function waitCompleted(
  api: Pick<TestApi, 'baseUrl'>,
  scanId: string,
  timeoutMs = 60_000,
): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = await json(await fetch(`${api.baseUrl}/v1/scans/${scanId}`));
    if (['completed', 'failed', 'cancelled'].includes(String(status.data.state))) return status.data;
    if (Date.now() > deadline) throw new Error(`scan ${scanId} still ${String(status.data.state)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * The end-to-end scenarios every deployment mode must pass: the embedded default and the
 * BullMQ mode with separate worker processes run the same list.
 */
export function defineScanScenarios(getApi: () => TestApi): void {
  it('scans a local path and serves every artifact it lists', async () => {
    const api = getApi();
    const response = await postScan(api, { repo_path: api.repoDir, create_zip: true });
    expect(response.status).toBe(201);
    const body = await json<ScanResultData>(response);
    expect(body.status).toBe('success');
    const result = body.data;
    expect(result.repo_name).toBe('sample');
    expect(result.artifact_dir).toBe(`scans/${result.scan_id}/result`);
    expect(Object.keys(result.artifacts).sort()).toEqual(['json', 'md', 'txt', 'zip']);
    for (const [format, artifact] of Object.entries(result.artifacts)) {
      const download = await fetch(`${api.baseUrl}${artifact.url}`);
      expect(download.status).toBe(200);
      const bytes = Buffer.from(await download.arrayBuffer());
      expect(bytes.length).toBe(artifact.bytes);
      expect(createHash('sha256').update(bytes).digest('hex')).toBe(artifact.sha256);
      expect(download.headers.get('content-disposition')).toMatch(
        new RegExp(`^attachment; filename="?sample\\.${format}"?$`),
      );
    }
    const summary = await json<{ files: unknown[]; repository: { name: string } }>(
      await fetch(`${api.baseUrl}/v1/summary/${result.scan_id}`),
    );
    expect(summary.data.repository.name).toBe('sample');
    expect(summary.data.files.length).toBe(result.num_textual_files);
  });

  it('uploads a zip, unwraps its single top-level folder and applies query options', async () => {
    const api = getApi();
    const zip = await buildZip(join(api.dataDir, '..', 'up.zip'), {
      'demo-main/README.md': '# Demo\n',
      'demo-main/src/app.py': 'print("hi")\n',
      'demo-main/src/app_test.py': 'assert True\n',
    });
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(zip)], { type: 'application/zip' }), 'demo.zip');
    const response = await fetch(`${api.baseUrl}/v1/upload?lite=true&exclude_patterns=*_test.py`, {
      method: 'POST',
      body: form,
    });
    expect(response.status).toBe(201);
    const body = await json<ScanResultData>(response);
    expect(body.data.repo_name).toBe('demo-main');
    expect(body.data.num_textual_files).toBe(2);
    const txt = await (await fetch(`${api.baseUrl}/v1/download/${body.data.scan_id}?format=txt`)).text();
    expect(txt).toContain('FILE: src/app.py');
    expect(txt).not.toContain('app_test.py');
    expect(txt).not.toContain('Repository:'); // lite
  });

  it('answers 202 at once with ?wait=false and streams events through to completed', async () => {
    const api = getApi();
    const response = await postScan(api, { repo_path: api.repoDir }, '?wait=false');
    expect(response.status).toBe(202);
    const body = await json<{ scan_id: string; state: string; status_url: string; events_url: string }>(response);
    expect(response.headers.get('location')).toBe(body.data.status_url);
    expect(body.data.events_url).toBe(`/v1/scans/${body.data.scan_id}/events`);
    const events = await readEvents(`${api.baseUrl}${body.data.events_url}`);
    expect(events[0]?.event).toBe('state');
    const last = events.at(-1);
    expect(last?.event).toBe('state');
    expect((last?.data as { state: string }).state).toBe('completed');
    expect((last?.data as { result: ScanResultData }).result.scan_id).toBe(body.data.scan_id);
  });

  it('Prefer: respond-async answers 202 too', async () => {
    const api = getApi();
    const response = await fetch(`${api.baseUrl}/v1/scan`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', prefer: 'respond-async' },
      body: JSON.stringify({ repo_path: api.repoDir }),
    });
    expect(response.status).toBe(202);
    const { data } = await json<{ scan_id: string }>(response);
    expect((await waitCompleted(api, data.scan_id)).state).toBe('completed');
  });

  it('runs 20 scans submitted at once to completion, each published once', async () => {
    const api = getApi();
    const responses = await Promise.all(
      Array.from({ length: 20 }, () => postScan(api, { repo_path: api.repoDir }, '?wait=false')),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(202));
    const ids = await Promise.all(responses.map(async (r) => (await json<{ scan_id: string }>(r)).data.scan_id));
    expect(new Set(ids).size).toBe(20);
    const finals = await Promise.all(ids.map((id) => waitCompleted(api, id, 120_000)));
    for (const final of finals) {
      expect(final.state).toBe('completed');
      expect(final.attempt).toBe(1);
      const result = final.result as ScanResultData;
      await access(join(api.dataDir, result.artifact_dir, 'output.md'));
    }
  });

  it('keeps /health fast while a large scan runs: p99 under 100 ms over at least 100 requests it overlaps', async () => {
    const api = getApi();
    const root = join(api.localRoot, 'large');
    await writeLargeTree(root, 1000, 80_000);
    const accepted = await json<{ scan_id: string }>(await postScan(api, { repo_path: root }, '?wait=false'));
    const statusUrl = `${api.baseUrl}/v1/scans/${accepted.data.scan_id}`;
    const status = async (): Promise<{ state: string; progress: { phase: string } }> =>
      (await json<{ state: string; progress: { phase: string } }>(await fetch(statusUrl))).data;
    // Measure while the engine reads, classifies, counts and writes, not while it walks or waits.
    await expect.poll(async () => (await status()).progress.phase, { timeout: 60_000, interval: 20 }).toBe('read');
    const latencies = await probeWhileRunning(
      `${api.baseUrl}/health`,
      async () => (await status()).state === 'running',
    );
    expect(latencies.length).toBeGreaterThanOrEqual(100);
    expect(p99(latencies)).toBeLessThan(100);
    expect((await waitCompleted(api, accepted.data.scan_id, 120_000)).state).toBe('completed');
  });

  it('cleanup deletes a finished scan: afterwards everything about it is 404', async () => {
    const api = getApi();
    const { data } = await json<ScanResultData>(await postScan(api, { repo_path: api.repoDir }));
    const cleanup = await fetch(`${api.baseUrl}/v1/cleanup/${data.scan_id}`, { method: 'DELETE' });
    expect(cleanup.status).toBe(200);
    expect((await json(cleanup)).message).toBe(`Deleted scan ID: ${data.scan_id}`);
    for (const path of [
      `/v1/scans/${data.scan_id}`,
      `/v1/summary/${data.scan_id}`,
      `/v1/download/${data.scan_id}?format=txt`,
    ]) {
      const response = await fetch(`${api.baseUrl}${path}`);
      expect(response.status).toBe(404);
      expect((await json(response)).code).toBe('SCAN_NOT_FOUND');
    }
    await expect(access(join(api.dataDir, 'scans', data.scan_id))).rejects.toThrow();
  });
}

/** `files` code-like files of about `bytes` each, different enough that the tokenizer works for real. */
export async function writeLargeTree(root: string, files: number, bytes: number): Promise<void> {
  for (let i = 0; i < files; i++) {
    const dir = join(root, `pkg${i % 12}`, `mod${i % 7}`);
    await mkdir(dir, { recursive: true });
    let text = '';
    for (let line = 0; text.length < bytes; line++) {
      const n = (i * 7919 + line * 104_729) % 1_000_003;
      text += `export function handler_${i}_${line}(input${n % 97}: Record<string, number>): number { return input${n % 97}['k${n}'] ?? ${n}; }\n`;
    }
    await writeFile(join(dir, `file${i}.ts`), text);
  }
}
