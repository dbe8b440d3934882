import { Buffer } from 'node:buffer';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createTokenCounter } from '../../src/tokens/index.js';
import { runScan } from '../../src/scan/run-scan.js';
import type { ScanInput } from '../../src/scan/run-scan.js';
import { ARTIFACT_FILE_NAMES } from '../../src/artifacts/artifact-names.js';
import { readOutput } from '../artifacts/read-output.js';
import { DEFAULT_ENGINE_LIMITS, DEFAULT_SCAN_OPTIONS } from '../../src/types.js';
import type { ScanOptions, SourceInfo } from '../../src/types.js';
import { pick, randomContent, seededRandom } from './random-contents.js';
import { comparableReport, earlierScanOf } from './earlier-scan.js';

const counter = createTokenCounter('o200k_base');
const deps = {
  countTokens: (contents: Uint8Array[]): Promise<number[]> =>
    Promise.resolve(contents.map((c) => counter.count(Buffer.from(c).toString('utf8')))),
};
const FORMATS = ['txt', 'md', 'json'] as const;

const NAMES = [
  'main.ts',
  'README.md',
  'notes #1.md',
  'naïve file.txt',
  'data.json',
  'a%20b.py',
  'q?.sh',
  'x.rs',
  'bin.dat',
];
const FOLDERS = ['', 'src/', 'src/deep/', 'docs/', 'ünï/'];

const OPTION_SETS: Array<Partial<ScanOptions>> = [
  {},
  { secrets: 'report' },
  { compress: 'signatures', removeComments: true },
  { lite: true, skipTree: true },
  { treeDepth: 1 },
  { sizeLimit: 3000, secrets: 'off' },
  { docsOnly: true },
  { includePatterns: ['**/*.md', '**/*.ts', '**/*.txt'], excludeDirs: ['docs'] },
];

const remote = (commit: string): SourceInfo => ({
  type: 'remote',
  url: 'https://github.com/acme/fuzz',
  hostFamily: 'github',
  ref: commit,
  branch: 'main',
  commit,
  subdir: null,
});

describe('a carried scan writes what a fresh scan writes, whatever changed (seeded random trees)', () => {
  const bases: string[] = [];
  afterAll(async () => {
    await Promise.all(bases.map((b) => rm(b, { recursive: true, force: true })));
  });

  it.each(Array.from({ length: Number(process.env.CARRY_FUZZ_SEEDS ?? 12) }, (_, i) => i + 1))(
    'seed %i',
    async (seed) => {
      const rng = seededRandom(seed);
      const base = await mkdtemp(join(tmpdir(), 'reposcan-carry-fuzz-'));
      bases.push(base);
      const root = join(base, 'repo');
      const paths = new Set<string>();
      while (paths.size < 6 + Math.floor(rng() * 20)) paths.add(pick(rng, FOLDERS) + pick(rng, NAMES));
      for (const path of paths) {
        await mkdir(dirname(join(root, path)), { recursive: true });
        await writeFile(join(root, path), randomContent(rng));
      }
      const options = { ...DEFAULT_SCAN_OPTIONS, ...pick(rng, OPTION_SETS) };
      const linked = rng() < 0.6;
      const source = (commit: string): SourceInfo =>
        linked
          ? remote(commit)
          : { ...remote(commit), type: 'local', url: null, hostFamily: null, ref: null, commit: null, branch: null };
      const input = (outDir: string, commit: string): ScanInput => ({
        root,
        repoName: 'fuzz',
        source: source(commit),
        options,
        limits: DEFAULT_ENGINE_LIMITS,
        encoding: 'o200k_base',
        outDir,
        keepLayout: true,
      });
      const folder = async (name: string): Promise<string> => {
        const dir = join(base, name);
        await mkdir(dir);
        return dir;
      };

      const earlierDir = await folder('earlier');
      const first = await runScan(input(earlierDir, 'a'.repeat(40)), deps);
      const earlier = earlierScanOf(first, earlierDir);
      // Only the contents of texts change: what a clone's plan hands the engine.
      const texts = first.files.map((f) => f.path);
      const changed = texts.filter(() => rng() < 0.3);
      for (const path of changed)
        await writeFile(join(root, path), rng() < 0.15 ? await readFile(join(root, path)) : randomContent(rng));

      const freshDir = await folder('fresh');
      const carriedDir = await folder('carried');
      const fresh = await runScan(input(freshDir, 'b'.repeat(40)), deps);
      const carried = await runScan(
        { ...input(carriedDir, 'b'.repeat(40)), earlier: { ...earlier, changed: new Set(changed) } },
        deps,
      );

      expect(comparableReport(carried)).toEqual(comparableReport(fresh));
      for (const format of FORMATS) {
        const [left, right] = await Promise.all([
          readFile(join(freshDir, ARTIFACT_FILE_NAMES[format])),
          readOutput(join(carriedDir, ARTIFACT_FILE_NAMES[format])),
        ]);
        expect(right.toString('latin1'), `${format} differs`).toBe(left.toString('latin1'));
      }
    },
  );
});
