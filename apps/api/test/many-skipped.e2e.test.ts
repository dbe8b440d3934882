import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeManySkippedTree } from '../../../packages/core/test/scan/many-skipped-tree.js';
import type { ManySkippedTree } from '../../../packages/core/test/scan/many-skipped-tree.js';
import { postScan } from './support/scenarios.js';
import { startTestApi } from './support/test-runtime.js';
import type { TestApi } from './support/test-runtime.js';

interface Envelope<T> {
  status: string;
  code?: string;
  data: T;
}

describe('a scan with more skipped paths than arguments fit on the stack (embedded mode)', () => {
  const MAX_SCAN_FILES = 10;
  let tree: ManySkippedTree;
  let api: TestApi;
  beforeAll(async () => {
    tree = await makeManySkippedTree();
    api = await startTestApi({
      ALLOWED_LOCAL_ROOTS: tree.base,
      MAX_SCAN_FILES: String(MAX_SCAN_FILES),
      SCAN_WAIT_SECONDS: '50',
    });
  });
  afterAll(async () => {
    await api?.close();
    await tree?.cleanup();
  });

  it('completes on its first attempt with every excluded (pattern) and extra (limit) path listed', async () => {
    const response = await postScan(api, { repo_path: tree.root, exclude_patterns: ['*.skip'] });
    const body = (await response.json()) as Envelope<{
      scan_id: string;
      num_textual_files: number;
      skipped_count: number;
    }>;
    expect({ status: response.status, code: body.code }).toEqual({ status: 201, code: undefined });
    expect(body.data.num_textual_files).toBe(MAX_SCAN_FILES);
    expect(body.data.skipped_count).toBe(tree.excluded + tree.kept - MAX_SCAN_FILES);

    const status = (await (await fetch(`${api.baseUrl}/v1/scans/${body.data.scan_id}`)).json()) as Envelope<{
      attempt: number;
    }>;
    expect(status.data.attempt).toBe(1);
    const summary = (await (await fetch(`${api.baseUrl}/v1/summary/${body.data.scan_id}`)).json()) as Envelope<{
      skipped: Array<{ path: string; reason: string }>;
    }>;
    const reasons: Record<string, number> = {};
    for (const entry of summary.data.skipped) reasons[entry.reason] = (reasons[entry.reason] ?? 0) + 1;
    expect(reasons).toEqual({ pattern: tree.excluded, limit: tree.kept - MAX_SCAN_FILES });
  });

  it('previews it too', async () => {
    const response = await fetch(`${api.baseUrl}/v1/inspect`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ repo_path: tree.root, exclude_patterns: ['*.skip'] }),
    });
    const body = (await response.json()) as Envelope<{ files: unknown[]; skipped_count: number }>;
    expect({ status: response.status, code: body.code }).toEqual({ status: 200, code: undefined });
    expect(body.data.files).toHaveLength(MAX_SCAN_FILES);
    expect(body.data.skipped_count).toBe(tree.excluded + tree.kept - MAX_SCAN_FILES);
  });
});
