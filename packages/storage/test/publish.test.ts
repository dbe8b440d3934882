import { randomUUID } from 'node:crypto';
import { mkdir, readFile, readdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RESULT_FILE_NAMES } from '../src/index.js';
import { createdScan, errorCode, tempStore } from './temp-store.js';
import type { TempStore } from './temp-store.js';

/** Fills an output folder with every artifact, each tagged with `tag` and big enough to take time to write. */
async function fillOutput(outDir: string, tag: string): Promise<void> {
  const body = `${tag}\n`.repeat(50_000);
  for (const name of RESULT_FILE_NAMES) await writeFile(join(outDir, name), `${name}:${body}`);
}

async function readResult(dir: string): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  for (const name of (await readdir(dir)).sort()) files[name] = await readFile(join(dir, name), 'utf8');
  return files;
}

describe('publish', () => {
  let t: TempStore;
  beforeEach(async () => {
    t = await tempStore();
  });
  afterEach(() => t.cleanup());

  it('two attempts racing: exactly one publishes, and the result is wholly one of them', async () => {
    for (let round = 0; round < 20; round++) {
      const id = await createdScan(t.store);
      const a = await t.store.createStaging(id, 1);
      const b = await t.store.createStaging(id, 2);
      await fillOutput(a.outDir, 'A');
      await fillOutput(b.outDir, 'B');
      const expectedA = await readResult(a.outDir);
      const expectedB = await readResult(b.outDir);

      const outcomes = await Promise.all([t.store.publish(id, a.outDir), t.store.publish(id, b.outDir)]);
      expect(outcomes.filter((o) => o === 'published')).toHaveLength(1);
      expect(outcomes.filter((o) => o === 'already-published')).toHaveLength(1);

      const winner = outcomes[0] === 'published' ? expectedA : expectedB;
      const result = await readResult(join(t.store.scanDir(id), 'result'));
      expect(result).toEqual(winner);
      expect(await readFile(t.store.resultFile(id, 'summary.json'), 'utf8')).toBe(winner['summary.json']);
    }
  });

  it('the loser keeps its own output until it removes its staging folder', async () => {
    const id = await createdScan(t.store);
    const first = await t.store.createStaging(id, 1);
    const late = await t.store.createStaging(id, 2);
    await fillOutput(first.outDir, 'first');
    await fillOutput(late.outDir, 'late');
    expect(await t.store.publish(id, first.outDir)).toBe('published');
    expect(await t.store.publish(id, late.outDir)).toBe('already-published');
    expect((await readResult(join(t.store.scanDir(id), 'result')))['output.txt']).toContain('first');

    await t.store.removeStaging(late.dir);
    await t.store.removeStaging(first.dir);
    expect((await readdir(t.store.scanDir(id))).sort()).toEqual(['request.json', 'result', 'state.json']);
  });

  it('refuses an empty output folder, which rename would let a later attempt replace', async () => {
    const id = await createdScan(t.store);
    const staging = await t.store.createStaging(id, 1);
    expect(await errorCode(() => t.store.publish(id, staging.outDir))).toBe('INTERNAL_ERROR');
  });

  it('refuses a folder outside the scan’s staging folders (outside DATA_DIR, another scan, the scan folder)', async () => {
    const id = await createdScan(t.store);
    const other = await createdScan(t.store);
    const foreign = await t.store.createStaging(other, 1);
    await fillOutput(foreign.outDir, 'X');
    const outside = join(t.sandbox, 'outside');
    await mkdir(outside);
    await fillOutput(outside, 'X');
    const plain = join(t.store.scanDir(id), 'plain');
    await mkdir(plain);
    await fillOutput(plain, 'X');

    for (const dir of [foreign.outDir, outside, plain, t.store.scanDir(id)]) {
      expect(await errorCode(() => t.store.publish(id, dir)), dir).toBe('INTERNAL_ERROR');
    }
    expect(await errorCode(() => t.store.publish(randomUUID(), outside))).toBe('SCAN_NOT_FOUND');
  });

  it('refuses an output folder that is a symlink', async () => {
    const id = await createdScan(t.store);
    const staging = await t.store.createStaging(id, 1);
    const elsewhere = join(t.sandbox, 'elsewhere');
    await mkdir(elsewhere);
    await fillOutput(elsewhere, 'X');
    await symlink(elsewhere, join(staging.dir, 'linked'));
    expect(await errorCode(() => t.store.publish(id, join(staging.dir, 'linked')))).toBe('INTERNAL_ERROR');
    expect(await readdir(t.store.scanDir(id))).not.toContain('result');
  });

  it('resultFile addresses only the fixed artifact names', async () => {
    const id = await createdScan(t.store);
    for (const name of RESULT_FILE_NAMES)
      expect(t.store.resultFile(id, name)).toBe(join(t.store.scanDir(id), 'result', name));
    for (const name of ['../state.json', 'state.json', 'output.exe', '']) {
      expect(await errorCode(() => t.store.resultFile(id, name as never)), name).toBe('INTERNAL_ERROR');
    }
  });
});
