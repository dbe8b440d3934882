import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postScan } from './support/scenarios.js';
import { startTestApi } from './support/test-runtime.js';
import type { TestApi } from './support/test-runtime.js';

// A scan's counts are exact: each travels as `tokens` and, for clients of the first API, under
// its first name (`estimated_tokens` for totals, `tokens_estimate` per file), with the same value.
// Inspect's counts are estimates and carry only the old names.

interface Totals {
  tokens?: number;
  estimated_tokens: number;
  formatted: { tokens?: string; estimated_tokens: string };
}
interface FileEntry {
  path: string;
  tokens?: number;
  tokens_estimate: number;
}

function expectBothNames(totals: Totals, files: FileEntry[]): void {
  expect(totals.tokens).toBeGreaterThan(0);
  expect(totals.estimated_tokens).toBe(totals.tokens);
  expect(totals.formatted.tokens).toBe(totals.formatted.estimated_tokens);
  expect(files.length).toBeGreaterThan(1);
  for (const file of files) {
    expect(file.tokens, file.path).toBeTypeOf('number');
    expect(file.tokens_estimate, file.path).toBe(file.tokens);
  }
  expect(files.reduce((sum, f) => sum + (f.tokens ?? 0), 0)).toBe(totals.tokens);
}

describe('token count names on every answer', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(async () => {
    await api?.close();
  });

  it('a scan: the result, the status, the summary record and output.json carry `tokens` and the old name, equal', async () => {
    const response = await postScan(api, { repo_path: api.repoDir });
    expect(response.status).toBe(201);
    const result = (
      (await response.json()) as {
        data: { scan_id: string; summary: Totals; artifacts: Record<string, { url: string }> };
      }
    ).data;
    const status = (
      (await (await fetch(`${api.baseUrl}/v1/scans/${result.scan_id}`)).json()) as {
        data: { result: { summary: Totals } };
      }
    ).data;
    const summary = (
      (await (await fetch(`${api.baseUrl}/v1/summary/${result.scan_id}`)).json()) as {
        data: { summary: Totals; files: FileEntry[] };
      }
    ).data;
    const output = (await (await fetch(`${api.baseUrl}${result.artifacts.json?.url ?? ''}`)).json()) as {
      summary: Totals;
      files: FileEntry[];
    };

    expectBothNames(summary.summary, summary.files);
    expectBothNames(output.summary, output.files);
    expect(result.summary).toEqual(summary.summary);
    expect(status.result.summary).toEqual(summary.summary);
  });

  it('inspect: estimates keep only their old names', async () => {
    const response = await fetch(`${api.baseUrl}/v1/inspect`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ repo_path: api.repoDir }),
    });
    expect(response.status).toBe(200);
    const data = ((await response.json()) as { data: { summary: Totals; files: FileEntry[] } }).data;
    expect(data.summary.estimated_tokens).toBeGreaterThan(0);
    expect(data.summary).not.toHaveProperty('tokens');
    expect(data.summary.formatted).not.toHaveProperty('tokens');
    for (const file of data.files) expect(file).not.toHaveProperty('tokens');
  });
});
