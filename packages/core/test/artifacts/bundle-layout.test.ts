import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runScan } from '../../src/scan/run-scan.js';
import type { ScanReport } from '../../src/scan/run-scan.js';
import { createTokenCounter } from '../../src/tokens/index.js';
import { DEFAULT_ENGINE_LIMITS, DEFAULT_SCAN_OPTIONS } from '../../src/types.js';
import { readZip } from '../scan/read-zip.js';

// A repository whose own paths look like the bundle's: an `assets/` folder, a `manifest.json`
// and a `README.md` of its own, and non-textual files named `README` and `manifest.json` too.
// Its files must land under `repository/` at their paths, byte for byte, and never take the
// place of the bundle's own entries.
const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');
const BLOB = (label: string): Buffer => Buffer.concat([Buffer.from(label), Buffer.from([0, 1, 2, 255, 0, 7])]);
const TREE: Record<string, Buffer> = {
  'README.md': Buffer.from('# My project\n\nIts own readme.\n'),
  'manifest.json': Buffer.from('{ "name": "my-project", "icons": ["assets/logo.png"] }\n'),
  'src/app.ts': Buffer.from('export const answer = 42;\n'),
  'assets/logo.png': PNG,
  'assets/assets/nested.png': PNG,
  'assets/manifest.json': BLOB('not json'),
  README: BLOB('a binary README'),
};
const counter = createTokenCounter('o200k_base');
const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

describe('the ZIP bundle of a repository with an assets/ folder, a manifest.json and a README of its own', () => {
  let base: string;
  let report: ScanReport;
  let entries: Map<string, Buffer>;

  beforeAll(async () => {
    base = await mkdtemp(join(tmpdir(), 'reposcan-bundle-layout-'));
    const root = join(base, 'my-project');
    for (const [path, bytes] of Object.entries(TREE)) {
      await mkdir(join(root, path, '..'), { recursive: true });
      await writeFile(join(root, path), bytes);
    }
    const outDir = join(base, 'out');
    await mkdir(outDir);
    report = await runScan(
      {
        root,
        repoName: 'my-project',
        source: { type: 'local', url: null, hostFamily: null, ref: null, branch: null, commit: null, subdir: null },
        options: { ...DEFAULT_SCAN_OPTIONS, createZip: true },
        limits: DEFAULT_ENGINE_LIMITS,
        encoding: 'o200k_base',
        outDir,
      },
      {
        countTokens: (contents) => Promise.resolve(contents.map((c) => counter.count(Buffer.from(c).toString('utf8')))),
      },
    );
    entries = await readZip(join(outDir, 'output.zip'));
  });
  afterAll(() => rm(base, { recursive: true, force: true }));

  it('holds the bundle’s own files at the top and the repository’s non-textual files under repository/, at their paths', () => {
    expect(report.assets.map((a) => a.path).sort()).toEqual([
      'README',
      'assets/assets/nested.png',
      'assets/logo.png',
      'assets/manifest.json',
    ]);
    expect([...entries.keys()].sort()).toEqual(
      [
        'README.md',
        'manifest.json',
        'output.json',
        'output.md',
        'output.txt',
        'summary.json',
        'repository/README',
        'repository/assets/assets/nested.png',
        'repository/assets/logo.png',
        'repository/assets/manifest.json',
      ].sort(),
    );
  });

  it('keeps every repository file’s bytes', () => {
    for (const path of report.assets.map((a) => a.path))
      expect(entries.get(`repository/${path}`), path).toEqual(TREE[path]);
  });

  it('keeps its own README and manifest: the repository’s textual ones are in the outputs, not in their place', () => {
    const readme = entries.get('README.md')?.toString('utf8') ?? '';
    expect(readme).toMatch(/^# reposcan bundle: my-project\n/);
    expect(readme).toContain('`repository/`');
    const manifest = JSON.parse(entries.get('manifest.json')?.toString('utf8') ?? '{}') as {
      files: Array<{ path: string; bytes: number; sha256: string }>;
    };
    expect(manifest.files.map((f) => f.path).sort()).toEqual(
      [...entries.keys()].filter((name) => name !== 'manifest.json').sort(),
    );
    for (const file of manifest.files) {
      const bytes = entries.get(file.path) ?? Buffer.alloc(0);
      expect({ path: file.path, bytes: bytes.length, sha256: sha256(bytes) }).toEqual(file);
    }
    const output = entries.get('output.txt')?.toString('utf8') ?? '';
    expect(output).toContain('Its own readme.');
    expect(output).toContain('"name": "my-project"');
  });
});
