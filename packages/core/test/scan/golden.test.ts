import { Buffer } from 'node:buffer';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTokenCounter } from '../../src/tokens/index.js';
import { runScan } from '../../src/scan/run-scan.js';
import type { ScanReport } from '../../src/scan/run-scan.js';
import { DEFAULT_ENGINE_LIMITS, DEFAULT_SCAN_OPTIONS } from '../../src/types.js';
import type { SourceInfo } from '../../src/types.js';
import { GOLDEN_DIR, makeSampleTree } from './fixture-tree.js';

// Regenerate after an intended format change: UPDATE_GOLDEN=1 npx vitest run packages/core/test/scan/golden.test.ts
const UPDATE = process.env.UPDATE_GOLDEN === '1';

export const GITHUB_SOURCE: SourceInfo = {
  type: 'remote',
  url: 'https://github.com/acme/sample',
  hostFamily: 'github',
  ref: '0123456789abcdef0123456789abcdef01234567',
  branch: 'main',
  commit: '0123456789abcdef0123456789abcdef01234567',
  subdir: null,
};

const counter = createTokenCounter('o200k_base');
const inThread = (contents: Uint8Array[]): Promise<number[]> =>
  Promise.resolve(contents.map((c) => counter.count(Buffer.from(c).toString('utf8'))));

describe.each([
  ['rich', false],
  ['lite', true],
] as const)('golden artifacts, %s mode', (mode, lite) => {
  let tree: Awaited<ReturnType<typeof makeSampleTree>>;
  let report: ScanReport;

  beforeAll(async () => {
    tree = await makeSampleTree();
    report = await runScan(
      {
        root: tree.root,
        repoName: 'sample',
        source: GITHUB_SOURCE,
        options: { ...DEFAULT_SCAN_OPTIONS, lite },
        limits: DEFAULT_ENGINE_LIMITS,
        encoding: 'o200k_base',
        outDir: tree.outDir,
      },
      { countTokens: inThread, now: () => new Date('2026-01-01T00:00:00Z') },
    );
  });
  afterAll(() => tree.cleanup());

  it.each(['txt', 'md', 'json'] as const)('output.%s is byte-identical to the golden file', async (format) => {
    const actual = await readFile(join(tree.outDir, `output.${format}`));
    const golden = join(GOLDEN_DIR, mode, `output.${format}`);
    if (UPDATE) {
      await mkdir(join(GOLDEN_DIR, mode), { recursive: true });
      await writeFile(golden, actual);
    }
    expect(actual.toString('utf8')).toBe(await readFile(golden, 'utf8'));
    const artifact = report.artifacts.find((a) => a.format === format);
    expect(artifact?.bytes).toBe(actual.length);
  });
});
