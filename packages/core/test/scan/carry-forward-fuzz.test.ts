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

/** Carries in a row per seed, each from the one before. */
const CARRIES_PER_SEED = 3;
const commitOf = (step: number): string => String.fromCharCode(0x61 + step).repeat(40);

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

  it.each(Array.from({ length: Number(process.env.CARRY_FUZZ_SEEDS ?? 6) }, (_, i) => i + 1))(
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

      let earlierDir = await folder('earlier');
      let earlier = earlierScanOf(await runScan(input(earlierDir, commitOf(0)), deps), earlierDir);
      // Carried again and again: from the second step on, the earlier outputs are mostly spliced ones.
      for (let step = 1; step <= CARRIES_PER_SEED; step++) {
        // Only the contents of texts change: what a clone's plan hands the engine.
        const texts = earlier.files.map((f) => f.path);
        const changed = texts.filter(() => rng() < 0.3);
        for (const path of changed)
          await writeFile(join(root, path), rng() < 0.15 ? await readFile(join(root, path)) : randomContent(rng));

        const freshDir = await folder(`fresh-${step}`);
        const carriedDir = await folder(`carried-${step}`);
        const fresh = await runScan(input(freshDir, commitOf(step)), deps);
        const carried = await runScan(
          { ...input(carriedDir, commitOf(step)), earlier: { ...earlier, changed: new Set(changed) } },
          deps,
        );
        // The earlier scan deleted: what the carried one took of it must not go with it.
        await rm(earlierDir, { recursive: true, force: true });

        expect(comparableReport(carried), `step ${step}`).toEqual(comparableReport(fresh));
        for (const format of FORMATS) {
          const [left, right] = await Promise.all([
            readFile(join(freshDir, ARTIFACT_FILE_NAMES[format])),
            readOutput(join(carriedDir, ARTIFACT_FILE_NAMES[format])),
          ]);
          expect(right.toString('latin1'), `${format} differs at step ${step}`).toBe(left.toString('latin1'));
        }
        earlierDir = carriedDir;
        earlier = earlierScanOf(carried, carriedDir);
      }
    },
  );
});
