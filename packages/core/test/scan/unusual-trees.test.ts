import { appendFileSync, truncateSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inspectTree } from '../../src/scan/inspect-tree.js';
import { runScan } from '../../src/scan/run-scan.js';
import type { ScanInput } from '../../src/scan/run-scan.js';
import type { ScanDeps } from '../../src/scan/scan-deps.js';
import { IoThreads } from '../../src/io/io-threads.js';
import { DEFAULT_ENGINE_LIMITS, DEFAULT_SCAN_OPTIONS } from '../../src/types.js';
import { LOCAL_SOURCE } from './fixture-tree.js';
import type { EngineLimits, ScanOptions } from '../../src/types.js';
import { makeManySkippedTree } from './many-skipped-tree.js';
import type { ManySkippedTree } from './many-skipped-tree.js';

// The threads a wrapped dep delegates to, as an engine would own them.
const io = new IoThreads();
afterAll(() => io.close());
const byteCounts = (contents: Uint8Array[]): number[] => contents.map((c) => c.byteLength);

function input(
  root: string,
  outDir: string,
  options: Partial<ScanOptions> = {},
  limits: Partial<EngineLimits> = {},
): ScanInput {
  return {
    root,
    repoName: 'tree',
    source: LOCAL_SOURCE,
    options: { ...DEFAULT_SCAN_OPTIONS, ...options },
    limits: { ...DEFAULT_ENGINE_LIMITS, ...limits },
    encoding: 'o200k_base',
    outDir,
  };
}

describe('a tree with more skipped paths than arguments fit on the stack', () => {
  const KEPT = 10;
  let tree: ManySkippedTree;
  beforeAll(async () => {
    tree = await makeManySkippedTree();
  });
  afterAll(() => tree.cleanup());

  it('completes, listing every skipped path with its reason (pattern, limit)', async () => {
    const outDir = join(tree.base, 'out');
    await mkdir(outDir);
    const report = await runScan(
      input(tree.root, outDir, { excludePatterns: ['*.skip'], skipTree: true }, { maxFiles: KEPT }),
      { countTokens: (c) => Promise.resolve(byteCounts(c)) },
    );
    expect(report.files.map((f) => f.path)).toEqual(
      Array.from({ length: KEPT }, (_, i) => `z/f${String(i).padStart(4, '0')}.txt`),
    );
    const reasons: Record<string, number> = {};
    for (const entry of report.skipped) reasons[entry.reason] = (reasons[entry.reason] ?? 0) + 1;
    expect(reasons).toEqual({ pattern: tree.excluded, limit: tree.kept - KEPT });
    expect(report.skipped[0]).toEqual({ path: 'a000/f0000.skip', reason: 'pattern' });
    expect(report.skipped.at(-1)).toEqual({
      path: `z/f${String(tree.kept - 1).padStart(4, '0')}.txt`,
      reason: 'limit',
    });
    const json = JSON.parse(await readFile(join(outDir, 'output.json'), 'utf8')) as { skipped_count: number };
    expect(json.skipped_count).toBe(tree.excluded + tree.kept - KEPT);
  });

  it('previews it too', async () => {
    const report = await inspectTree({
      root: tree.root,
      repoName: 'tree',
      source: LOCAL_SOURCE,
      options: { ...DEFAULT_SCAN_OPTIONS, excludePatterns: ['*.skip'] },
      limits: { ...DEFAULT_ENGINE_LIMITS, maxFiles: KEPT },
    });
    expect(report.files).toHaveLength(KEPT);
    expect(report.skipped).toHaveLength(tree.excluded + tree.kept - KEPT);
  });
});

describe('a file that changes between the walk and its read', () => {
  let base: string;
  beforeAll(async () => {
    base = await mkdtemp(join(tmpdir(), 'reposcan-changing-'));
  });
  afterAll(() => rm(base, { recursive: true, force: true }));
  /** A fresh tree for each test: the walk below changes it. */
  const fresh = async (name: string): Promise<{ root: string; outDir: string }> => {
    const root = join(base, name, 'root');
    const outDir = join(base, name, 'out');
    await mkdir(root, { recursive: true });
    await mkdir(outDir);
    await writeFile(join(root, 'grows.txt'), 'written before the walk\n');
    await writeFile(join(root, 'shrinks.txt'), 'written before the walk, cut short after it\n');
    await writeFile(join(root, 'steady.txt'), 'never touched\n');
    return { root, outDir };
  };

  // Changed as the walk hands the files on: after it measured them, before any is read.
  const walk: ScanDeps['walk'] = (walkInput, sink) =>
    io.walk(walkInput, (chunk) => {
      for (const file of chunk) {
        if (file.path === 'grows.txt') appendFileSync(file.absPath, 'APPENDED AFTER THE WALK\n');
        if (file.path === 'shrinks.txt') truncateSync(file.absPath, 10);
      }
      sink(chunk);
    });
  const CHANGED = [
    { path: 'grows.txt', reason: 'unreadable' },
    { path: 'shrinks.txt', reason: 'unreadable' },
  ];

  it('is drawn in the tree and listed as unreadable, none of its bytes in an artifact', async () => {
    const { root, outDir } = await fresh('scan');
    const report = await runScan(input(root, outDir), { countTokens: (c) => Promise.resolve(byteCounts(c)), walk });
    expect(report.files.map((f) => [f.path, f.size_bytes])).toEqual([['steady.txt', 14]]);
    expect(report.skipped).toEqual(CHANGED);
    expect(report.tree).toContain('grows.txt');
    expect(report.summary.total_size).toBe(14);
    for (const format of ['txt', 'md', 'json']) {
      const text = await readFile(join(outDir, `output.${format}`), 'utf8');
      expect(text).not.toContain('APPENDED');
      expect(text).not.toContain('written before the walk');
    }
  });

  it('is left out of a preview the same way', async () => {
    const { root } = await fresh('preview');
    const report = await inspectTree(
      { root, repoName: 'tree', source: LOCAL_SOURCE, options: DEFAULT_SCAN_OPTIONS, limits: DEFAULT_ENGINE_LIMITS },
      { walk },
    );
    expect(report.files.map((f) => f.path)).toEqual(['steady.txt']);
    expect(report.skipped).toEqual(CHANGED);
    expect(report.summary.total_size).toBe(14);
  });
});
