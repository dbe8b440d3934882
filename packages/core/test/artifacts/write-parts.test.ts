// Outputs cut into parts by max_tokens_per_part: every part recounted with js-tiktoken in both
// encodings, files whole unless one alone is over the budget, and a cut file's pieces give it back.
import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Tiktoken } from 'js-tiktoken/lite';
import cl100kRanks from 'js-tiktoken/ranks/cl100k_base';
import o200kRanks from 'js-tiktoken/ranks/o200k_base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runScan } from '../../src/scan/run-scan.js';
import type { RunScanDeps, ScanReport } from '../../src/scan/run-scan.js';
import { PART_FILE_PREFIX } from '../../src/artifacts/write-parts.js';
import { createTokenCounter } from '../../src/tokens/index.js';
import { DEFAULT_ENGINE_LIMITS, DEFAULT_SCAN_OPTIONS } from '../../src/types.js';
import type { ScanOptions, TokenEncodingName } from '../../src/types.js';
import { LOCAL_SOURCE, makeSampleTree } from '../scan/fixture-tree.js';
import { readZip } from '../scan/read-zip.js';
import { mulberry32 } from '../tokens/seeded-random.js';

const ENCODINGS: TokenEncodingName[] = ['o200k_base', 'cl100k_base'];
const reference = {
  o200k_base: new Tiktoken(o200kRanks),
  cl100k_base: new Tiktoken(cl100kRanks),
};
const referenceCount = (encoding: TokenEncodingName, text: string): number =>
  reference[encoding].encode(text, [], []).length;

let base: string;
beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'reposcan-parts-'));
});
afterAll(() => rm(base, { recursive: true, force: true }));

/** A scan of `root` into a new folder (or `outDir`); `deps` replaces the in-thread exact counter. */
async function scan(
  root: string,
  encoding: TokenEncodingName,
  options: Partial<ScanOptions>,
  deps: Partial<RunScanDeps> = {},
  outDir?: string,
): Promise<{ report: ScanReport; outDir: string }> {
  outDir ??= await mkdtemp(join(base, 'out-'));
  const counter = createTokenCounter(encoding);
  const report = await runScan(
    {
      root,
      repoName: 'tree',
      source: LOCAL_SOURCE,
      options: { ...DEFAULT_SCAN_OPTIONS, ...options },
      limits: DEFAULT_ENGINE_LIMITS,
      encoding,
      outDir,
    },
    { countTokens: (contents) => contents.map((c) => counter.countUtf8(c)), ...deps },
  );
  return { report, outDir };
}

interface JsonPart {
  part: number;
  tree?: string;
  tree_part?: { part: number; parts: number };
  files: Array<{ path: string; content: string; file_part?: { part: number; parts: number } }>;
  summary?: unknown;
}

/** Checks every part against the budget with js-tiktoken; returns the JSON parts, parsed. */
async function checkParts(
  report: ScanReport,
  outDir: string,
  encoding: TokenEncodingName,
  budget: number,
): Promise<JsonPart[]> {
  const parts = (report.parts ?? []).flatMap((output) => output.parts);
  expect(report.artifacts.filter((a) => a.format !== 'zip')).toEqual([]);
  const names = (await readdir(outDir)).sort();
  expect(names).toEqual(parts.map((p) => p.file).sort());
  const json: JsonPart[] = [];
  for (const format of ['txt', 'md', 'json'] as const) {
    const mine = parts.filter((p) => p.format === format);
    expect(mine.map((p) => p.part)).toEqual(mine.map((_, i) => i + 1));
    for (const part of mine) {
      const bytes = await readFile(join(outDir, part.file));
      const text = bytes.toString('utf8');
      expect(part.bytes).toBe(bytes.length);
      const tokens = referenceCount(encoding, text);
      expect({ file: part.file, tokens }).toEqual({ file: part.file, tokens: part.tokens });
      expect(tokens).toBeLessThanOrEqual(budget);
      if (format === 'json') json.push(JSON.parse(text) as JsonPart);
      else expect(text).toContain(format === 'txt' ? `Part ${part.part} of tree (txt)` : `**Part ${part.part}** of`);
    }
  }
  return json;
}

/** Each file's content put back together from the JSON parts, in the order the parts give them. */
function filesFromParts(parts: JsonPart[]): Array<[string, string]> {
  const files: Array<[string, string]> = [];
  for (const part of parts) {
    for (const file of part.files) {
      const last = files.at(-1);
      if (file.file_part && file.file_part.part > 1 && last?.[0] === file.path) last[1] += file.content;
      else files.push([file.path, file.content]);
    }
  }
  return files;
}

async function wholeFiles(root: string, encoding: TokenEncodingName): Promise<Array<[string, string]>> {
  const { outDir } = await scan(root, encoding, {});
  const whole = JSON.parse(await readFile(join(outDir, 'output.json'), 'utf8')) as JsonPart;
  return whole.files.map((f) => [f.path, f.content]);
}

/** A tree like a small project: code, docs and data in folders, some files with long or multibyte lines. */
async function realisticTree(): Promise<string> {
  const root = join(base, 'realistic');
  const random = mulberry32(29);
  const words = [
    'const',
    'value',
    'return',
    'function',
    'import',
    'export',
    'if',
    'else',
    'データ',
    'naïve',
    '→',
    '{',
    '}',
    '(',
    ')',
    ';',
    '//',
    '  ',
  ];
  for (let f = 0; f < 120; f++) {
    const dir = join(root, `pkg${f % 7}`, f % 3 === 0 ? 'src' : 'lib');
    await mkdir(dir, { recursive: true });
    const lines: string[] = [];
    const count = Math.floor(random() * 80);
    for (let l = 0; l < count; l++) {
      const n = Math.floor(random() * 14);
      lines.push(Array.from({ length: n }, () => words[Math.floor(random() * words.length)]).join(' '));
    }
    const ext = ['ts', 'md', 'json', 'py'][f % 4] as string;
    await writeFile(join(dir, `file${f}.${ext}`), lines.join(f % 5 === 0 ? '\r\n' : '\n') + (f % 2 ? '\n' : ''));
  }
  return root;
}

describe('parts of a realistic tree', () => {
  for (const encoding of ENCODINGS) {
    it(`keeps every part within the budget and every file whole and in order (${encoding})`, async () => {
      const root = await realisticTree();
      const budget = 1500;
      const { report, outDir } = await scan(root, encoding, { maxTokensPerPart: budget });
      const json = await checkParts(report, outDir, encoding, budget);
      expect(json.length).toBeGreaterThan(3);
      // No file is cut when each fits a part alone.
      for (const part of json) for (const file of part.files) expect(file.file_part).toBeUndefined();
      expect(filesFromParts(json)).toEqual(await wholeFiles(root, encoding));
      expect(json[0]?.tree).toContain('pkg0');
      expect(json.at(-1)?.summary).toEqual(report.summary);
      expect(json.slice(0, -1).every((p) => p.summary === undefined)).toBe(true);
    });
  }

  it('does the same on the sample repository, rich and lite, with the bundle holding every part', async () => {
    const tree = await makeSampleTree();
    try {
      for (const lite of [false, true]) {
        const { report, outDir } = await scan(tree.root, 'o200k_base', {
          maxTokensPerPart: 1000,
          lite,
          createZip: !lite,
        });
        if (!lite) {
          const zip = join(outDir, 'output.zip');
          await rm(zip);
          for (const output of report.parts ?? []) {
            const all = await Promise.all(output.parts.map((p) => readFile(join(outDir, p.file))));
            expect(createHash('sha256').update(Buffer.concat(all)).digest('hex')).toBe(output.sha256);
            expect(output.bytes).toBe(Buffer.concat(all).length);
          }
        }
        await checkParts(report, outDir, 'o200k_base', 1000);
      }
    } finally {
      await tree.cleanup();
    }
  });
});

describe('a file over the budget', () => {
  it('is cut at line boundaries into pieces marked part k of n, which give the file back', async () => {
    const root = join(base, 'huge');
    await mkdir(root, { recursive: true });
    const lines = Array.from({ length: 4000 }, (_, i) => `line ${i}: ${'word '.repeat(i % 17)}データ ${i * 7}`);
    await writeFile(join(root, 'a-small.txt'), 'before\n');
    await writeFile(join(root, 'big.txt'), `${lines.join('\n')}\n`);
    await writeFile(join(root, 'z-small.txt'), 'after\n');
    for (const encoding of ENCODINGS) {
      const { report, outDir } = await scan(root, encoding, { maxTokensPerPart: 2000 });
      const json = await checkParts(report, outDir, encoding, 2000);
      const pieces = json.flatMap((p) => p.files).filter((f) => f.path === 'big.txt');
      expect(pieces.length).toBeGreaterThan(10);
      pieces.forEach((piece, i) => {
        expect(piece.file_part).toEqual({ part: i + 1, parts: pieces.length });
        // Cut at line ends: every piece but the last ends with its newline.
        expect(piece.content.endsWith('\n')).toBe(true);
      });
      expect(filesFromParts(json)).toEqual(await wholeFiles(root, encoding));
      const txt = await readFile(join(outDir, 'output.part-02.txt'), 'utf8');
      expect(txt).toMatch(/PART: \d+ of \d+ of this file/);
      expect(txt).toMatch(/- big\.txt \(this file: part \d+ of \d+\)/);
    }
  });

  it('is not counted again by a repeat scan with a token cache, which writes the same parts', async () => {
    const root = join(base, 'repeat');
    await mkdir(root, { recursive: true });
    const lines = Array.from({ length: 3000 }, (_, i) => `const v${i} = "${'x'.repeat(i % 23)}"; // ${i}`);
    await writeFile(join(root, 'big.js'), `${lines.join('\n')}\n`);
    await writeFile(join(root, 'small.md'), '# small\n');
    const counter = createTokenCounter('o200k_base');
    const table = new Map<string, number>();
    const cache = {
      get: (key: Uint8Array) => table.get(Buffer.from(key).toString('hex')),
      set: (key: Uint8Array, tokens: number) => void table.set(Buffer.from(key).toString('hex'), tokens),
    };
    const run = async (): Promise<{ counted: number; parts: Map<string, string> }> => {
      let counted = 0;
      const { report, outDir } = await scan(
        root,
        'o200k_base',
        { maxTokensPerPart: 2000 },
        {
          countTokens: (contents) => {
            counted += contents.length;
            return contents.map((c) => counter.countUtf8(c));
          },
          tokenCache: { cache },
        },
      );
      await checkParts(report, outDir, 'o200k_base', 2000);
      const files = (report.parts ?? []).flatMap((output) => output.parts.map((p) => p.file));
      const parts = new Map(
        await Promise.all(files.map(async (f) => [f, await readFile(join(outDir, f), 'utf8')] as const)),
      );
      return { counted, parts };
    };
    const first = await run();
    expect(first.parts.size).toBeGreaterThan(10);
    expect(first.counted).toBeGreaterThan(0);
    const again = await run();
    // Whole files, the stretches a cut needs and the JSON-escaped contents all come from the cache.
    expect(again.counted).toBe(0);
    expect(again.parts).toEqual(first.parts);
  });

  it('cuts a single line longer than the budget at character boundaries', async () => {
    const root = join(base, 'one-line');
    await mkdir(root, { recursive: true });
    const random = mulberry32(7);
    const alphabet = ['a', 'é', 'データ', '😀', ' ', 'x', '中文', 'ß'];
    const line = Array.from({ length: 30_000 }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
    await writeFile(join(root, 'line.txt'), line);
    for (const encoding of ENCODINGS) {
      const { report, outDir } = await scan(root, encoding, { maxTokensPerPart: 1000 });
      const json = await checkParts(report, outDir, encoding, 1000);
      const pieces = json.flatMap((p) => p.files);
      expect(pieces.length).toBeGreaterThan(5);
      // JSON.parse would show a cut inside a UTF-8 sequence as U+FFFD.
      for (const piece of pieces) expect(piece.content).not.toContain('\ufffd');
      expect(pieces.map((p) => p.content).join('')).toBe(line);
    }
  });
});

describe('edge cases', () => {
  it('packs thousands of tiny files', async () => {
    const root = join(base, 'tiny');
    for (let i = 0; i < 3000; i++) {
      const path = join(root, `d${i % 30}`, `f${i}.txt`);
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, i % 3 === 0 ? `${i}` : `v${i}\n`);
    }
    const { report, outDir } = await scan(root, 'cl100k_base', { maxTokensPerPart: 5000 });
    const json = await checkParts(report, outDir, 'cl100k_base', 5000);
    expect(json.flatMap((p) => p.files)).toHaveLength(3000);
    // The tree of 3 000 files is over the budget alone: it is cut into parts of its own.
    expect(json[0]?.tree_part).toEqual({ part: 1, parts: expect.any(Number) as number });
  });

  it('cuts a list of non-textual files too long for one part, each row whole and in order', async () => {
    const root = join(base, 'many-assets');
    await mkdir(join(root, 'img'), { recursive: true });
    await writeFile(join(root, 'README.md'), '# Pictures\n');
    for (let i = 0; i < 600; i++)
      await writeFile(join(root, 'img', `picture-${i}.png`), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, i % 256]));
    const whole = JSON.parse(
      await readFile(join((await scan(root, 'o200k_base', {})).outDir, 'output.json'), 'utf8'),
    ) as JsonPart & { assets: unknown[] };
    expect(whole.assets).toHaveLength(600);
    const { report, outDir } = await scan(root, 'o200k_base', { maxTokensPerPart: 3000 });
    const json = (await checkParts(report, outDir, 'o200k_base', 3000)) as Array<
      JsonPart & { assets?: unknown[]; assets_part?: { part: number; parts: number } }
    >;
    const tails = json.filter((p) => p.assets !== undefined);
    expect(tails.length).toBeGreaterThan(2);
    expect(tails.map((p) => p.assets_part)).toEqual(tails.map((_, i) => ({ part: i + 1, parts: tails.length })));
    expect(tails.flatMap((p) => p.assets)).toEqual(whole.assets);
    // Laid out as the whole output lays its list out: a row a line, each after the first behind a comma.
    for (const part of (report.parts ?? []).find((o) => o.format === 'json')?.parts ?? []) {
      const text = await readFile(join(outDir, part.file), 'utf8');
      const assets = (JSON.parse(text) as { assets?: unknown[] }).assets;
      if (assets) expect(text).toContain(`"assets":[\n${assets.map((a) => JSON.stringify(a)).join('\n,')}\n],\n`);
    }
  });

  it('names parts past 99 at the width of their count, so a listing sorts them in part order', async () => {
    const root = join(base, 'many-parts');
    for (let i = 0; i < 130; i++) {
      await mkdir(join(root, `d${i % 4}`), { recursive: true });
      await writeFile(join(root, `d${i % 4}`, `f${i}.txt`), `${'word '.repeat(100)}${i}\n`);
    }
    const { report, outDir } = await scan(root, 'o200k_base', {
      maxTokensPerPart: 200,
      skipTree: true,
      createZip: true,
    });
    const zip = await readZip(join(outDir, 'output.zip'));
    await rm(join(outDir, 'output.zip'));
    await checkParts(report, outDir, 'o200k_base', 200);
    const listing = (await readdir(outDir)).sort();
    for (const output of report.parts ?? []) {
      const names = output.parts.map((p) => p.file);
      expect(output.parts.length, output.format).toBeGreaterThan(99);
      expect(output.parts.length, output.format).toBeLessThan(1000);
      expect(names.slice(0, 2)).toEqual([`output.part-001.${output.format}`, `output.part-002.${output.format}`]);
      expect(names).toContain(`output.part-100.${output.format}`);
      // In part order both as the code sorts strings and as a shell glob lists them.
      expect([...names].sort()).toEqual(names);
      expect(listing.filter((n) => n.endsWith(`.${output.format}`))).toEqual(names);
      for (const part of output.parts) expect(zip.get(part.file)?.length, part.file).toBe(part.bytes);
    }
  });

  it('fails clearly when the budget cannot hold a part header and one character', async () => {
    const root = join(base, 'small-budget');
    await mkdir(root, { recursive: true });
    await writeFile(join(root, `${'long-name-'.repeat(20)}.txt`), 'content\n');
    await expect(scan(root, 'o200k_base', { maxTokensPerPart: 20 })).rejects.toMatchObject({
      code: 'PART_BUDGET_TOO_SMALL',
    });
  });

  it('leaves nothing behind when the scan fails after parts were written', async () => {
    const root = join(base, 'failing');
    await mkdir(root, { recursive: true });
    for (let i = 0; i < 400; i++)
      await writeFile(join(root, `f${String(i).padStart(3, '0')}.txt`), `file ${i} ${'words '.repeat(200)}\n`);
    const outDir = await mkdtemp(join(base, 'out-'));
    const counter = createTokenCounter('o200k_base');
    let batches = 0;
    let writtenBefore: string[] = [];
    const scanning = scan(
      root,
      'o200k_base',
      { maxTokensPerPart: 1000 },
      {
        countTokens: async (contents) => {
          // Late enough that parts of the first files are written, while files are still counted.
          if (++batches === 40) {
            await new Promise((resolve) => setTimeout(resolve, 200));
            writtenBefore = (await readdir(outDir)).filter((name) => name.startsWith(PART_FILE_PREFIX));
            throw new Error('the disk went away');
          }
          return contents.map((c) => counter.countUtf8(c));
        },
      },
      outDir,
    );
    await expect(scanning).rejects.toThrow('the disk went away');
    expect(writtenBefore.length).toBeGreaterThan(0);
    expect(await readdir(outDir)).toEqual([]);
  });

  it('writes one part of an output with nothing to hold', async () => {
    const root = join(base, 'empty');
    await mkdir(root, { recursive: true });
    const { report, outDir } = await scan(root, 'o200k_base', { maxTokensPerPart: 1000, lite: true, skipTree: true });
    expect((report.parts ?? []).map((o) => o.parts.length)).toEqual([1, 1, 1]);
    expect(JSON.parse(await readFile(join(outDir, 'output.part-01.json'), 'utf8'))).toEqual({ files: [], part: 1 });
    await checkParts(report, outDir, 'o200k_base', 1000);
  });

  it('writes the single outputs, no part, without a budget', async () => {
    const root = join(base, 'plain');
    await mkdir(root, { recursive: true });
    await writeFile(join(root, 'a.txt'), 'a\n');
    const { report, outDir } = await scan(root, 'o200k_base', {});
    expect(report.parts).toBeUndefined();
    expect((await readdir(outDir)).sort()).toEqual(['output.json', 'output.md', 'output.txt']);
    expect(Buffer.byteLength(await readFile(join(outDir, 'output.txt'), 'utf8'))).toBeGreaterThan(0);
  });
});
