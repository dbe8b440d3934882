import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTokenCounter } from '../../src/tokens/index.js';
import { inspectTree, toInspectResult } from '../../src/scan/inspect-tree.js';
import { runScan, scanTree } from '../../src/scan/run-scan.js';
import { smallTreeScanDeps } from '../../src/scan/scan-deps.js';
import type { ScanDeps } from '../../src/scan/scan-deps.js';
import { IoThreads } from '../../src/io/io-threads.js';
import type { ScanReport } from '../../src/scan/run-scan.js';
import { DEFAULT_ENGINE_LIMITS, DEFAULT_SCAN_OPTIONS } from '../../src/types.js';
import type { ScanProgress } from '../../src/types.js';
import { LOCAL_SOURCE, makeSampleTree, sampleScanInput } from './fixture-tree.js';
import { readZip } from './read-zip.js';

// The threads a wrapped dep delegates to, as an engine would own them.
const io = new IoThreads();
afterAll(() => io.close());
const counter = createTokenCounter('o200k_base');
const inThread = (contents: Uint8Array[]): Promise<number[]> =>
  Promise.resolve(contents.map((c) => counter.count(Buffer.from(c).toString('utf8'))));

const input = sampleScanInput;

interface JsonArtifact {
  summary: { total_files: number; estimated_tokens: number; files_with_replacements: number };
  files: Array<{ path: string; content: string; tokens_estimate: number; encoding?: string; replacements?: number }>;
  assets: Array<{ path: string; subcategory: string }>;
}

describe('runScan on the sample tree', () => {
  let tree: Awaited<ReturnType<typeof makeSampleTree>>;
  let report: ScanReport;
  const progress: ScanProgress[] = [];

  beforeAll(async () => {
    tree = await makeSampleTree();
    report = await runScan(input(tree.root, tree.outDir, { createZip: true }), { countTokens: inThread }, (p) =>
      progress.push(p),
    );
  });
  afterAll(() => tree.cleanup());

  it('records every skipped path with its reason and never reads outside the root', async () => {
    expect(report.skipped).toEqual(
      expect.arrayContaining([
        { path: 'build/', reason: 'ignored' },
        { path: 'debug.log', reason: 'ignored' },
        { path: 'leak.txt', reason: 'symlink' },
        { path: 'node_modules/', reason: 'excluded_dir' },
        { path: 'src/loop', reason: 'symlink' },
      ]),
    );
    for (const name of await readdir(tree.outDir)) {
      expect(await readFile(join(tree.outDir, name), 'latin1')).not.toContain('SECRET-OUTSIDE-THE-ROOT');
    }
  });

  it('keeps UTF-8 contents byte-exact and decodes other encodings to UTF-8', async () => {
    const json = JSON.parse(await readFile(join(tree.outDir, 'output.json'), 'utf8')) as JsonArtifact;
    const byPath = new Map(json.files.map((f) => [f.path, f]));
    expect(byPath.get('src/index.ts')?.content).toBe(await readFile(join(tree.root, 'src/index.ts'), 'utf8'));
    expect(byPath.get('src/lib/no-newline.py')?.content).toBe('no trailing newline');
    expect(byPath.get('src/lib/empty.ts')?.content).toBe('');
    expect(byPath.get('docs/latin1.txt')?.content).toBe('café crème brûlée – windows-1252\n');
    expect(byPath.get('docs/utf16.txt')?.content).toBe('UTF-16 text: é中😀\n');
    expect(byPath.get('docs/utf16.txt')?.encoding).toMatch(/utf-16/i);
  });

  it('counts special-token text as ordinary text, exactly', async () => {
    const json = JSON.parse(await readFile(join(tree.outDir, 'output.json'), 'utf8')) as JsonArtifact;
    const index = json.files.find((f) => f.path === 'src/index.ts');
    expect(index?.tokens_estimate).toBe(counter.count(index?.content ?? ''));
    expect(json.summary.estimated_tokens).toBe(json.files.reduce((sum, f) => sum + f.tokens_estimate, 0));
  });

  it('lists non-textual files as assets, including a .zip without NUL bytes', () => {
    expect(report.assets.map((a) => [a.path, a.subcategory])).toEqual([
      ['assets/archive.zip', 'binary'],
      ['assets/logo.png', 'image'],
    ]);
    expect(report.summary.total_files).toBe(report.files.length + report.assets.length);
  });

  it('fences a file that contains ``` with a longer fence', async () => {
    const md = await readFile(join(tree.outDir, 'output.md'), 'utf8');
    const fencesMd = await readFile(join(tree.root, 'docs/fences.md'), 'utf8');
    expect(md).toContain(`\`\`\`\`\`markdown\n${fencesMd}\`\`\`\`\`\n`);
  });

  it('writes a ZIP bundle whose manifest verifies every entry', async () => {
    const entries = await readZip(join(tree.outDir, 'output.zip'));
    expect([...entries.keys()].sort()).toEqual(
      [
        'README.md',
        'repository/assets/archive.zip',
        'repository/assets/logo.png',
        'manifest.json',
        'output.json',
        'output.md',
        'output.txt',
        'summary.json',
      ].sort(),
    );
    const manifest = JSON.parse(entries.get('manifest.json')?.toString('utf8') ?? '{}') as {
      files: Array<{ path: string; bytes: number; sha256: string }>;
    };
    expect(manifest.files.map((f) => f.path).sort()).toEqual(
      [...entries.keys()].filter((n) => n !== 'manifest.json').sort(),
    );
    for (const file of manifest.files) {
      const data = entries.get(file.path) ?? Buffer.alloc(0);
      expect(data.length).toBe(file.bytes);
      expect(createHash('sha256').update(data).digest('hex')).toBe(file.sha256);
    }
    expect(entries.get('repository/assets/logo.png')).toEqual(await readFile(join(tree.root, 'assets/logo.png')));
    expect(entries.get('output.txt')).toEqual(await readFile(join(tree.outDir, 'output.txt')));
    const summary = JSON.parse(entries.get('summary.json')?.toString('utf8') ?? '{}') as ScanReport;
    expect(summary.summary.total_files).toBe(report.summary.total_files);
  });

  it('reports each artifact with its size and sha256', async () => {
    for (const artifact of report.artifacts) {
      const data = await readFile(join(tree.outDir, artifact.file));
      expect(artifact.bytes).toBe(data.length);
      expect(artifact.sha256).toBe(createHash('sha256').update(data).digest('hex'));
    }
    expect(report.artifacts.map((a) => a.format)).toEqual(['txt', 'md', 'json', 'zip']);
  });

  it('leaves only the artifacts in the output folder', async () => {
    expect((await readdir(tree.outDir)).sort()).toEqual(['output.json', 'output.md', 'output.txt', 'output.zip']);
  });

  it('reports progress through each phase in order, never back; `done` is left to whoever publishes', () => {
    const phases = progress.map((p) => p.phase).filter((phase, i, all) => phase !== all[i - 1]);
    expect(phases).toEqual(['walk', 'read', 'render', 'zip']);
    const reads = progress.filter((p) => p.phase === 'read');
    expect(reads.at(-1)?.files_done).toBe(reads.at(-1)?.files_total);
  });
});

describe('runScan edge cases', () => {
  let base: string;
  beforeAll(async () => {
    base = await mkdtemp(join(tmpdir(), 'reposcan-edge-'));
  });
  afterAll(() => rm(base, { recursive: true, force: true }));

  async function fresh(name: string): Promise<{ root: string; outDir: string }> {
    const root = join(base, name, 'root');
    const outDir = join(base, name, 'out');
    await mkdir(root, { recursive: true });
    await mkdir(outDir);
    return { root, outDir };
  }

  it('writes every byte of a tree several times larger than its read buffer', async () => {
    // 1 200 small files and 8 large ones, about 24 MB: batches wrap around the engine's 8 MiB
    // read ring (a file limit under it leaves it that size) several times; small contents are
    // copied into the write buffers, large ones are written straight from the ring. Reused memory
    // must never leak into another file's output.
    const { root, outDir } = await fresh('larger-than-ring');
    const line = (i: number, n: number): string =>
      `row ${i}.${n}: "quoted" \\ back\tslash, é日😀 ${(i * 7919 + n * 104729) % 1000003}\n`;
    const contents = new Map<string, string>();
    const make = (path: string, i: number, bytes: number): string => {
      let text = `// ${path}\n`;
      for (let n = 0; text.length < bytes; n++) text += line(i, n);
      contents.set(path, text);
      return text;
    };
    await mkdir(join(root, 'small'));
    await mkdir(join(root, 'large'));
    for (let i = 0; i < 1200; i++)
      await writeFile(
        join(root, 'small', `f${String(i).padStart(4, '0')}.txt`),
        make(`small/f${String(i).padStart(4, '0')}.txt`, i, 10_000),
      );
    for (let i = 0; i < 8; i++)
      await writeFile(
        join(root, 'large', `big${String(i).padStart(2, '0')}.txt`),
        make(`large/big${String(i).padStart(2, '0')}.txt`, i, 1_500_000),
      );

    const byteCounts = (items: Uint8Array[]): number[] => items.map((c) => c.byteLength);
    const report = await runScan(
      { ...input(root, outDir, { skipTree: true }), limits: { ...DEFAULT_ENGINE_LIMITS, maxFileBytes: 2_000_000 } },
      { countTokens: (items) => Promise.resolve(byteCounts(items)) },
    );
    expect(report.files).toHaveLength(1208);
    for (const file of report.files)
      expect(file.tokens_estimate).toBe(Buffer.byteLength(contents.get(file.path) ?? '', 'utf8'));

    const json = JSON.parse(await readFile(join(outDir, 'output.json'), 'utf8')) as JsonArtifact;
    expect(json.files.filter((f) => f.content !== contents.get(f.path)).map((f) => f.path)).toEqual([]);
    for (const format of ['txt', 'md']) {
      const text = await readFile(join(outDir, `output.${format}`), 'utf8');
      let at = 0;
      for (const file of report.files) {
        const found = text.indexOf(contents.get(file.path) ?? '', at);
        expect(found, `${format}: ${file.path}`).toBeGreaterThanOrEqual(at);
        at = found + 1;
      }
    }
  });

  it('a 0-file scan still writes valid artifacts', async () => {
    const { root, outDir } = await fresh('empty');
    const report = await runScan(input(root, outDir), { countTokens: inThread });
    expect(report.summary.total_files).toBe(0);
    const json = JSON.parse(await readFile(join(outDir, 'output.json'), 'utf8')) as JsonArtifact;
    expect(json.files).toEqual([]);
    expect(await readFile(join(outDir, 'output.md'), 'utf8')).toContain('_No textual files._');
  });

  it('docs_only keeps only documentation files', async () => {
    const tree = await makeSampleTree();
    try {
      const report = await runScan(input(tree.root, tree.outDir, { docsOnly: true }), { countTokens: inThread });
      expect(report.files.length).toBeGreaterThan(0);
      expect(report.files.every((f) => f.subcategory === 'docs')).toBe(true);
      expect(report.assets).toEqual([]);
    } finally {
      await tree.cleanup();
    }
  });

  it('names and counts the files whose undecodable bytes became U+FFFD, in every format', async () => {
    const { root, outDir } = await fresh('replacements');
    await writeFile(
      join(root, 'gruss.txt'),
      Buffer.concat([Buffer.from('Grüße aus Köln\n'), Buffer.from([0xff, 0x0a])]),
    );
    await writeFile(join(root, 'clean.txt'), 'nothing to replace\n');
    await writeFile(join(root, 'latin1.txt'), Buffer.from('caf\xe9 cr\xe8me\n', 'latin1'));
    const report = await runScan(input(root, outDir), { countTokens: inThread });
    expect(report.summary.files_with_replacements).toBe(1);
    const json = JSON.parse(await readFile(join(outDir, 'output.json'), 'utf8')) as JsonArtifact;
    expect(json.summary.files_with_replacements).toBe(1);
    expect(
      json.files.map(({ path, encoding, replacements, content }) => ({ path, encoding, replacements, content })),
    ).toEqual([
      { path: 'clean.txt', encoding: undefined, replacements: undefined, content: 'nothing to replace\n' },
      { path: 'gruss.txt', encoding: 'UTF-8', replacements: 1, content: 'Grüße aus Köln\n\ufffd\n' },
      { path: 'latin1.txt', encoding: 'windows-1252', replacements: undefined, content: 'café crème\n' },
    ]);
    expect(await readFile(join(outDir, 'output.txt'), 'utf8')).toContain(
      'ENCODING: UTF-8 (decoded to UTF-8; 1 undecodable character shown as U+FFFD)',
    );
    expect(await readFile(join(outDir, 'output.md'), 'utf8')).toContain(
      'decoded from UTF-8 · 1 undecodable character shown as U+FFFD',
    );
  });

  it('a preview names and counts them too', async () => {
    const { root } = await fresh('replacements-preview');
    await writeFile(join(root, 'gruss.txt'), Buffer.concat([Buffer.from('Grüße aus Köln\n'), Buffer.from([0xff])]));
    await writeFile(join(root, 'clean.txt'), 'nothing to replace\n');
    const report = await inspectTree({
      root,
      repoName: 'sample',
      source: LOCAL_SOURCE,
      options: DEFAULT_SCAN_OPTIONS,
      limits: DEFAULT_ENGINE_LIMITS,
    });
    const preview = toInspectResult(report, null);
    expect(preview.summary.files_with_replacements).toBe(1);
    expect(preview.files.map(({ path, replacements }) => ({ path, replacements }))).toEqual([
      { path: 'clean.txt', replacements: undefined },
      { path: 'gruss.txt', replacements: 1 },
    ]);
  });

  it('size_limit skips larger files as too_large without reading them', async () => {
    const { root, outDir } = await fresh('size');
    await writeFile(join(root, 'small.txt'), 'ok\n');
    await writeFile(join(root, 'big.txt'), 'x'.repeat(5000));
    const report = await runScan(input(root, outDir, { sizeLimit: 1000 }), { countTokens: inThread });
    expect(report.files.map((f) => f.path)).toEqual(['small.txt']);
    expect(report.skipped).toEqual([{ path: 'big.txt', reason: 'too_large' }]);
  });

  it('skip_tree leaves the tree out of every format', async () => {
    const tree = await makeSampleTree();
    try {
      await runScan(input(tree.root, tree.outDir, { skipTree: true }), { countTokens: inThread });
      expect(await readFile(join(tree.outDir, 'output.txt'), 'utf8')).not.toContain('Directory structure');
      expect(await readFile(join(tree.outDir, 'output.md'), 'utf8')).not.toContain('Directory structure');
      expect(JSON.parse(await readFile(join(tree.outDir, 'output.json'), 'utf8'))).not.toHaveProperty('tree');
    } finally {
      await tree.cleanup();
    }
  });

  it('a file that fails to read after the walk is still drawn in the tree and is listed as skipped', async () => {
    const tree = await makeSampleTree();
    try {
      const readFiles: ScanDeps['readFiles'] = async (requests, maxBytes) => {
        const outcomes = await io.readFiles(requests, maxBytes);
        return outcomes.map((outcome, i) =>
          requests[i]?.absPath.endsWith('Guide.md') ? { ok: false, reason: 'unreadable' } : outcome,
        );
      };
      const report = await runScan(input(tree.root, tree.outDir), { countTokens: inThread, readFiles });
      expect(report.skipped).toContainEqual({ path: 'docs/Guide.md', reason: 'unreadable' });
      expect(report.files.map((f) => f.path)).not.toContain('docs/Guide.md');
      // The head is written when the walk ends, before any file is read: the tree shows what the walk found.
      expect(report.tree).toContain('Guide.md');
      expect(await readFile(join(tree.outDir, 'output.txt'), 'utf8')).not.toContain('FILE: docs/Guide.md');
    } finally {
      await tree.cleanup();
    }
  });

  it('an aborted scan throws and leaves nothing in the output folder', async () => {
    const tree = await makeSampleTree();
    try {
      const controller = new AbortController();
      controller.abort();
      await expect(
        runScan({ ...input(tree.root, tree.outDir), signal: controller.signal }, { countTokens: inThread }),
      ).rejects.toThrow();
      expect(await readdir(tree.outDir)).toEqual([]);
    } finally {
      await tree.cleanup();
    }
  });

  it('a tokenizer failure fails the scan and leaves nothing behind', async () => {
    const tree = await makeSampleTree();
    try {
      const broken = (): Promise<number[]> => Promise.reject(new Error('tokenizer crashed'));
      await expect(runScan(input(tree.root, tree.outDir), { countTokens: broken })).rejects.toThrow(
        'tokenizer crashed',
      );
      expect(await readdir(tree.outDir)).toEqual([]);
    } finally {
      await tree.cleanup();
    }
  });

  it('a tree past the limit of the calling thread is walked again on threads, to the same artifacts and records', async () => {
    const tree = await makeSampleTree();
    const threads = new IoThreads();
    try {
      const scanWith = async (upTo: number, outDir: string) => {
        await mkdir(outDir, { recursive: true });
        const deps = { ...smallTreeScanDeps(threads, upTo), countTokens: inThread };
        const { files, assets, skipped, artifacts } = await scanTree(input(tree.root, outDir), deps, () => {});
        return { files, assets, skipped, artifacts };
      };
      const small = await scanWith(1000, tree.outDir);
      const big = await scanWith(2, join(tree.outDir, '..', 'out-threads'));
      expect(small.files.length).toBeGreaterThan(2);
      expect(big).toEqual(small);
    } finally {
      await threads.close();
      await tree.cleanup();
    }
  });

  it('the default worker pool gives the same counts as the in-thread counter', async () => {
    const tree = await makeSampleTree();
    try {
      const pooled = await runScan(input(tree.root, tree.outDir));
      const expected = await Promise.all(
        pooled.files.map(async (f) => {
          const json = JSON.parse(await readFile(join(tree.outDir, 'output.json'), 'utf8')) as JsonArtifact;
          return counter.count(json.files.find((x) => x.path === f.path)?.content ?? '');
        }),
      );
      expect(pooled.files.map((f) => f.tokens_estimate)).toEqual(expected);
    } finally {
      await tree.cleanup();
    }
  });
});
