import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postScan } from './support/scenarios.js';
import { startTestApi } from './support/test-runtime.js';
import type { TestApi } from './support/test-runtime.js';
import { buildZip } from './support/zips.js';

// compress and remove_comments through the API: a scan by path, an upload (query parameters) and a
// preview each transform the sample's code, say so in their answers, and leave other files alone.

interface Compression {
  compress: string;
  remove_comments: boolean;
  files: number;
  tokens_before: number;
  tokens_after: number;
  not_compressed: Array<{ path: string; reason: string }>;
}

describe('compressed code through the API', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(async () => {
    await api?.close();
  });

  it('a scan by path: the result and the summary say what was transformed, the outputs hold it', async () => {
    const response = await postScan(api, { repo_path: api.repoDir, compress: 'signatures', remove_comments: true });
    expect(response.status).toBe(201);
    const data = ((await response.json()) as { data: { scan_id: string; compression: Compression } }).data;
    // The sample's `no trailing newline` is not Python: kept as it is, and said so.
    expect(data.compression).toMatchObject({
      compress: 'signatures',
      remove_comments: true,
      not_compressed: [{ path: 'src/lib/no-newline.py', reason: 'parse_error' }],
    });
    expect(data.compression.files).toBeGreaterThan(0);
    expect(data.compression.tokens_after).toBeLessThan(data.compression.tokens_before);

    const summary = (await (await fetch(`${api.baseUrl}/v1/summary/${data.scan_id}`)).json()) as {
      data: {
        options: Record<string, unknown>;
        compression: Compression;
        files: Array<{ path: string; tokens: number; compression?: { result: string; tokens_before: number } }>;
      };
    };
    expect(summary.data.options).toMatchObject({ compress: 'signatures', remove_comments: true });
    expect(summary.data.compression).toEqual(data.compression);
    const index = summary.data.files.find((f) => f.path === 'src/index.ts');
    expect(index?.compression?.result).toBe('compressed');
    expect(index?.tokens).toBeLessThan(index?.compression?.tokens_before ?? 0);
    expect(summary.data.files.find((f) => f.path === 'README.md')?.compression).toBeUndefined();

    const txt = await (await fetch(`${api.baseUrl}/v1/download/${data.scan_id}?format=txt`)).text();
    expect(txt).toContain('export function main(): void { ⋯ }');
    expect(txt).not.toContain('console.log(greet');
  });

  it('an upload takes both as query parameters', async () => {
    const zip = await buildZip(join(api.dataDir, '..', 'code.zip'), {
      'app.py': 'import os\n\n# helper\ndef home():\n    # where\n    return os.environ["HOME"]\n',
    });
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(zip)]), 'code.zip');
    const response = await fetch(`${api.baseUrl}/v1/upload?compress=signatures&remove_comments=true`, {
      method: 'POST',
      body: form,
    });
    expect(response.status).toBe(201);
    const data = ((await response.json()) as { data: { scan_id: string; compression: Compression } }).data;
    expect(data.compression.files).toBe(1);
    const txt = await (await fetch(`${api.baseUrl}/v1/download/${data.scan_id}?format=txt`)).text();
    expect(txt).toContain('import os\n\n# helper\ndef home():\n    ⋯\n');
  });

  it('a preview estimates the tokens after the transform, and refuses a mode it does not know', async () => {
    const response = await fetch(`${api.baseUrl}/v1/inspect`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ repo_path: api.repoDir, compress: 'signatures' }),
    });
    expect(response.status).toBe(200);
    const data = ((await response.json()) as { data: { compression: Compression } }).data;
    expect(data.compression.files).toBeGreaterThan(0);
    expect(data.compression.tokens_after).toBeLessThan(data.compression.tokens_before);

    const refused = await postScan(api, { repo_path: api.repoDir, compress: 'bodies' });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain('compress');
  });
});
