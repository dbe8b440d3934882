import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postScan, waitCompleted } from './support/scenarios.js';
import { startTestApi } from './support/test-runtime.js';
import type { TestApi } from './support/test-runtime.js';

interface Envelope {
  data: { scan_id: string; state: string; progress: { phase: string } };
}

describe('cancelling a running scan', () => {
  let api: TestApi;
  beforeAll(async () => {
    // One scan at a time: the next scan can only run once the cancelled one has let go of the worker.
    api = await startTestApi({ WORKER_CONCURRENCY: '1', SCAN_WAIT_SECONDS: '30' });
  });
  afterAll(() => api.close());

  it('reaches its walk: DELETE answers, and the next scan on the same worker runs at once', async () => {
    // A 45-deep path and a pattern with ten `**`: a matcher that backtracks spends minutes here.
    const root = join(api.localRoot, 'deep');
    const deep = join(root, ...Array<string>(45).fill('a'));
    await mkdir(deep, { recursive: true });
    await writeFile(join(deep, 'c'), 'x\n');
    for (let i = 0; i < 200; i++) await writeFile(join(root, `f${i}.txt`), `file ${i}\n`);
    const pattern = `${Array<string>(10).fill('a/**/').join('')}b`;
    const accepted = await postScan(api, { repo_path: root, exclude_patterns: [pattern] }, '?wait=false');
    expect(accepted.status).toBe(202);
    const scanId = ((await accepted.json()) as Envelope).data.scan_id;
    const status = async (): Promise<Envelope['data']> =>
      ((await (await fetch(`${api.baseUrl}/v1/scans/${scanId}`)).json()) as Envelope).data;
    await expect.poll(async () => (await status()).state, { timeout: 30_000, interval: 20 }).not.toBe('queued');

    const deleted = await fetch(`${api.baseUrl}/v1/cleanup/${scanId}`, { method: 'DELETE' });
    expect(deleted.status).toBe(200);
    expect((await fetch(`${api.baseUrl}/v1/scans/${scanId}`)).status).toBe(404);

    // Within the POST's own wait (30 s): the cancelled walk no longer holds the only worker slot.
    const next = await postScan(api, { repo_path: api.repoDir });
    expect(next.status).toBe(201);
    const nextId = ((await next.json()) as Envelope).data.scan_id;
    expect((await waitCompleted(api, nextId)).state).toBe('completed');
  });
});
