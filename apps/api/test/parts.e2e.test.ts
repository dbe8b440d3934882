import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import { readdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readZip } from '../../../packages/core/test/scan/read-zip.js';
import { postScan, writeLargeTree } from './support/scenarios.js';
import { startTestApi } from './support/test-runtime.js';
import type { TestApi } from './support/test-runtime.js';

// max_tokens_per_part through the API: the result lists each output's parts with their exact
// counts, `&part=N` downloads one, the bundle holds them all, and a part that is not there is 404.

interface Part {
  part: number;
  url: string;
  bytes: number;
  sha256: string;
  tokens: number;
}
type Artifacts = Record<string, { url: string; bytes: number; sha256: string; parts?: Part[] }>;

const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

describe('a scan with max_tokens_per_part', () => {
  let api: TestApi;
  let scanId: string;
  let artifacts: Artifacts;
  const budget = 2000;

  beforeAll(async () => {
    api = await startTestApi();
    await writeLargeTree(join(api.repoDir, 'generated'), 40, 1500);
    const response = await postScan(api, { repo_path: api.repoDir, max_tokens_per_part: budget, create_zip: true });
    expect(response.status).toBe(201);
    const data = ((await response.json()) as { data: { scan_id: string; artifacts: Artifacts } }).data;
    scanId = data.scan_id;
    artifacts = data.artifacts;
  });
  afterAll(async () => {
    await api?.close();
  });

  it('lists the parts of each text output, each within the budget, and downloads part 2', async () => {
    for (const format of ['txt', 'md', 'json']) {
      const parts = artifacts[format]?.parts ?? [];
      expect(parts.length, format).toBeGreaterThan(2);
      expect(parts.map((p) => p.part)).toEqual(parts.map((_, i) => i + 1));
      for (const part of parts) {
        expect(part.tokens).toBeGreaterThan(0);
        expect(part.tokens).toBeLessThanOrEqual(budget);
      }
      const second = parts[1] as Part;
      expect(second.url).toBe(`/v1/download/${scanId}?format=${format}&part=2`);
      const response = await fetch(`${api.baseUrl}${second.url}`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-disposition')).toContain(`sample.part-02.${format}`);
      const bytes = Buffer.from(await response.arrayBuffer());
      expect(bytes.length).toBe(second.bytes);
      expect(sha256(bytes)).toBe(second.sha256);
      if (format === 'json') expect((JSON.parse(bytes.toString('utf8')) as { part: number }).part).toBe(2);
      else expect(bytes.toString('utf8')).toMatch(/Part.{0,3} 2/);
    }
  });

  it('puts every part in the bundle', async () => {
    const zip = Buffer.from(await (await fetch(`${api.baseUrl}${artifacts.zip?.url ?? ''}`)).arrayBuffer());
    const zipFile = join(api.dataDir, '..', `${scanId}.zip`);
    await writeFile(zipFile, zip);
    const entries = await readZip(zipFile);
    for (const format of ['txt', 'md', 'json']) {
      for (const part of artifacts[format]?.parts ?? []) {
        const entry = entries.get(`output.part-${String(part.part).padStart(2, '0')}.${format}`);
        expect(entry && sha256(entry)).toBe(part.sha256);
      }
      expect(entries.has(`output.${format}`)).toBe(false);
    }
  });

  it('answers 404 PART_NOT_FOUND past the last part and 409 PART_REQUIRED without part', async () => {
    const count = artifacts.txt?.parts?.length ?? 0;
    const missing = await fetch(`${api.baseUrl}/v1/download/${scanId}?format=txt&part=${count + 1}`);
    expect(missing.status).toBe(404);
    const body = (await missing.json()) as { code: string; detail: string };
    expect(body.code).toBe('PART_NOT_FOUND');
    expect(body.detail).toContain(`parts 1 to ${count}`);
    const whole = await fetch(`${api.baseUrl}/v1/download/${scanId}?format=md`);
    expect(whole.status).toBe(409);
    expect(((await whole.json()) as { code: string }).code).toBe('PART_REQUIRED');
    for (const query of ['part=0', 'part=two', 'part=1&part=2', 'part=1.5']) {
      const bad = await fetch(`${api.baseUrl}/v1/download/${scanId}?format=md&${query}`);
      expect(bad.status, query).toBe(400);
      expect(((await bad.json()) as { detail: string }).detail, query).toContain('a whole number from 1');
    }
    // The bundle is one file whatever the budget: it says so, not that the scan had no budget.
    const zipPart = await fetch(`${api.baseUrl}/v1/download/${scanId}?format=zip&part=1`);
    expect(zipPart.status).toBe(404);
    const zipBody = (await zipPart.json()) as { code: string; detail: string };
    expect(zipBody.code).toBe('PART_NOT_FOUND');
    expect(zipBody.detail).toContain('never in parts');
    expect(zipBody.detail).not.toContain('without max_tokens_per_part');
  });

  it('inspect estimates how many parts the budget would give', async () => {
    const response = await fetch(`${api.baseUrl}/v1/inspect`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ repo_path: api.repoDir, max_tokens_per_part: budget }),
    });
    expect(response.status).toBe(200);
    const data = ((await response.json()) as { data: { parts_estimate?: number } }).data;
    const actual = artifacts.txt?.parts?.length ?? 0;
    expect(data.parts_estimate).toBeGreaterThanOrEqual(Math.floor(actual / 2));
    expect(data.parts_estimate).toBeLessThanOrEqual(actual * 2);
    const without = await fetch(`${api.baseUrl}/v1/inspect`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ repo_path: api.repoDir }),
    });
    expect(((await without.json()) as { data: object }).data).not.toHaveProperty('parts_estimate');
  });

  it('refuses a budget below the minimum at submit', async () => {
    const response = await postScan(api, { repo_path: api.repoDir, max_tokens_per_part: 10 });
    expect(response.status).toBe(400);
    expect(JSON.stringify(await response.json())).toContain('max_tokens_per_part');
  });
});

describe('a scan in more than 99 parts', () => {
  let api: TestApi;
  let scanId: string;
  let artifacts: Artifacts;
  let resultDir: string;

  beforeAll(async () => {
    api = await startTestApi();
    const repo = join(api.localRoot, 'many');
    await writeLargeTree(repo, 120, 2600);
    const response = await postScan(api, { repo_path: repo, max_tokens_per_part: 1000 });
    expect(response.status).toBe(201);
    const data = ((await response.json()) as { data: { scan_id: string; artifacts: Artifacts; artifact_dir: string } })
      .data;
    scanId = data.scan_id;
    artifacts = data.artifacts;
    resultDir = join(api.dataDir, data.artifact_dir);
  });
  afterAll(async () => {
    await api?.close();
  });

  const download = async (format: string, part: number): Promise<{ name: string | null; bytes: Buffer }> => {
    const response = await fetch(`${api.baseUrl}/v1/download/${scanId}?format=${format}&part=${part}`);
    expect(response.status, `${format} part ${part}`).toBe(200);
    return { name: response.headers.get('content-disposition'), bytes: Buffer.from(await response.arrayBuffer()) };
  };

  it('names every part at the width of the count, in part order, and downloads them by number', async () => {
    const listing = (await readdir(resultDir)).filter((n) => n.startsWith('output.part-')).sort();
    for (const format of ['txt', 'md', 'json']) {
      const parts = artifacts[format]?.parts ?? [];
      expect(parts.length, format).toBeGreaterThan(99);
      expect(parts.length, format).toBeLessThan(1000);
      const names = parts.map((p) => `output.part-${String(p.part).padStart(3, '0')}.${format}`);
      expect(listing.filter((n) => n.endsWith(`.${format}`))).toEqual(names);
      for (const part of [7, 100]) {
        const { name, bytes } = await download(format, part);
        expect(name).toContain(`many.part-${String(part).padStart(3, '0')}.${format}`);
        expect(sha256(bytes)).toBe(parts[part - 1]?.sha256);
      }
    }
  });

  it('still serves a result whose parts have the names of before, two digits up to 99', async () => {
    const parts = artifacts.txt?.parts ?? [];
    for (const part of parts)
      if (part.part < 100)
        await rename(
          join(resultDir, `output.part-${String(part.part).padStart(3, '0')}.txt`),
          join(resultDir, `output.part-${String(part.part).padStart(2, '0')}.txt`),
        );
    for (const part of [7, 100]) {
      const { name, bytes } = await download('txt', part);
      expect(name).toContain(`many.part-${String(part).padStart(3, '0')}.txt`);
      expect(sha256(bytes)).toBe(parts[part - 1]?.sha256);
    }
  });
});
