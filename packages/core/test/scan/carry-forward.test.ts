import { Buffer } from 'node:buffer';
import { appendFile, mkdir, mkdtemp, readdir, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTokenCounter } from '../../src/tokens/index.js';
import { runScan } from '../../src/scan/run-scan.js';
import type { ScanInput, ScanReport } from '../../src/scan/run-scan.js';
import { CarryRefusedError, mayCarry } from '../../src/scan/carry-forward.js';
import type { EarlierScan } from '../../src/scan/carry-forward.js';
import { ARTIFACT_FILE_NAMES } from '../../src/artifacts/artifact-names.js';
import { readOutput } from '../artifacts/read-output.js';
import type { ScanOptions, ScannedFileRecord, SourceInfo } from '../../src/types.js';
import { makeSampleTree, sampleScanInput } from './fixture-tree.js';
import { comparableReport, earlierScanOf } from './earlier-scan.js';

const counter = createTokenCounter('o200k_base');
const deps = {
  countTokens: (contents: Uint8Array[]): Promise<number[]> =>
    Promise.resolve(contents.map((c) => counter.count(Buffer.from(c).toString('utf8')))),
};
const FORMATS = ['txt', 'md', 'json'] as const;

/** Two files of an earlier scan's list. */
function twoPaths(earlier: { files: ReadonlyArray<{ path: string }> }): [string, string] {
  return [earlier.files[0]?.path as string, earlier.files[2]?.path as string];
}

describe('carrying an earlier scan forward', () => {
  let tree: Awaited<ReturnType<typeof makeSampleTree>>;
  let base: string;

  beforeEach(async () => {
    tree = await makeSampleTree();
    base = await mkdtemp(join(tmpdir(), 'reposcan-carry-'));
  });
  afterEach(async () => {
    await tree.cleanup();
    await rm(base, { recursive: true, force: true });
  });

  const folder = async (name: string): Promise<string> => {
    const dir = join(base, name);
    await mkdir(dir);
    return dir;
  };
  const input = (outDir: string, options: Partial<ScanOptions>, source?: SourceInfo): ScanInput => ({
    ...sampleScanInput(tree.root, outDir, options),
    ...(source ? { source } : {}),
  });

  /** A first scan kept with its layout, as a worker keeps it for the next commit. */
  async function earlierScan(
    options: Partial<ScanOptions>,
    source?: SourceInfo,
  ): Promise<Omit<EarlierScan, 'changed'>> {
    const outDir = await folder('earlier');
    const report = await runScan({ ...input(outDir, options, source), keepLayout: true }, deps);
    expect(report.layout).toBeDefined();
    return earlierScanOf(report, outDir);
  }

  /** The same tree scanned from scratch and carried forward: both reports, and both folders' outputs. */
  async function bothWays(
    earlier: Omit<EarlierScan, 'changed'>,
    changed: string[],
    options: Partial<ScanOptions>,
    source?: SourceInfo,
  ): Promise<{ fresh: ScanReport; carried: ScanReport; freshDir: string; carriedDir: string }> {
    const freshDir = await folder('fresh');
    const carriedDir = await folder('carried');
    const fresh = await runScan({ ...input(freshDir, options, source), keepLayout: true }, deps);
    const carried = await runScan(
      { ...input(carriedDir, options, source), keepLayout: true, earlier: { ...earlier, changed: new Set(changed) } },
      deps,
    );
    return { fresh, carried, freshDir, carriedDir };
  }

  async function expectSameOutputs(a: string, b: string): Promise<void> {
    for (const format of FORMATS) {
      const [left, right] = await Promise.all([
        readFile(join(a, ARTIFACT_FILE_NAMES[format])),
        readOutput(join(b, ARTIFACT_FILE_NAMES[format])),
      ]);
      expect(right.equals(left), `${format} differs`).toBe(true);
    }
  }

  it.each<[string, Partial<ScanOptions>]>([
    ['default options', {}],
    ['secrets redacted', { secrets: 'redact' }],
    ['compressed code', { compress: 'signatures', removeComments: true }],
    ['lite outputs without a tree', { lite: true, skipTree: true }],
  ])('writes what a fresh scan writes when one file changed (%s)', async (_name, options) => {
    const earlier = await earlierScan(options);
    const [first, , third] = earlier.files;
    expect(third).toBeDefined();
    // One file in the middle gains a line with a secret; the first changes its size.
    await appendFile(join(tree.root, (third as { path: string }).path), '\nconst key = "AKIAIOSFODNN7EXAMPLQ";\n');
    await appendFile(join(tree.root, (first as { path: string }).path), '\nmore text\n');
    const changed = [(first as { path: string }).path, (third as { path: string }).path];
    const { fresh, carried, freshDir, carriedDir } = await bothWays(earlier, changed, options);

    expect(carried.carried).toBe(earlier.files.length - 2);
    expect(comparableReport(carried)).toEqual(comparableReport(fresh));
    await expectSameOutputs(freshDir, carriedDir);
  });

  it('writes what a fresh scan writes when nothing changed, and when the last file did', async () => {
    const earlier = await earlierScan({});
    const nothing = await bothWays(earlier, [], {});
    expect(nothing.carried.carried).toBe(earlier.files.length);
    await expectSameOutputs(nothing.freshDir, nothing.carriedDir);

    await rm(nothing.freshDir, { recursive: true });
    await rm(nothing.carriedDir, { recursive: true });
    const last = earlier.files.at(-1)?.path as string;
    await writeFile(join(tree.root, last), 'replaced\n');
    const { fresh, carried, freshDir, carriedDir } = await bothWays(earlier, [last], {});
    expect(carried.carried).toBe(earlier.files.length - 1);
    expect(comparableReport(carried)).toEqual(comparableReport(fresh));
    await expectSameOutputs(freshDir, carriedDir);
  });

  it('scans afresh when a changed file is no longer a text', async () => {
    const earlier = await earlierScan({});
    const path = earlier.files[1]?.path as string;
    await writeFile(join(tree.root, path), Buffer.from([0, 1, 2, 3, 0, 0, 0xff, 0xfe, 0]));
    const { fresh, carried, freshDir, carriedDir } = await bothWays(earlier, [path], {});
    expect(carried.carried).toBeUndefined();
    expect(carried.files.some((f) => f.path === path)).toBe(false);
    expect(comparableReport(carried)).toEqual(comparableReport(fresh));
    await expectSameOutputs(freshDir, carriedDir);
  });

  it('scans afresh when a changed file grew past the size limit', async () => {
    const options = { sizeLimit: 64 * 1024 };
    const earlier = await earlierScan(options);
    const path = earlier.files[2]?.path as string;
    await writeFile(join(tree.root, path), 'x'.repeat(64 * 1024 + 1));
    const { fresh, carried, freshDir, carriedDir } = await bothWays(earlier, [path], options);
    expect(carried.carried).toBeUndefined();
    expect(carried.skipped).toContainEqual({ path, reason: 'too_large' });
    expect(comparableReport(carried)).toEqual(comparableReport(fresh));
    await expectSameOutputs(freshDir, carriedDir);
  });

  it('writes each link anew when every file links to the commit, which has changed', async () => {
    const remote = (commit: string): SourceInfo => ({
      type: 'remote',
      url: 'https://github.com/acme/sample',
      hostFamily: 'github',
      ref: commit,
      branch: 'main',
      commit,
      subdir: null,
    });
    // A name the links percent-encode: the new links must match what a fresh scan builds.
    await writeFile(join(tree.root, 'naïve notes #1.md'), '# notes\n');
    const earlier = await earlierScan({}, remote('a'.repeat(40)));
    const path = earlier.files[0]?.path as string;
    await appendFile(join(tree.root, path), 'x\n');
    const { fresh, carried, freshDir, carriedDir } = await bothWays(earlier, [path], {}, remote('b'.repeat(40)));
    expect(carried.carried).toBe(earlier.files.length - 1);
    expect(carried.files[1]?.url).toContain('b'.repeat(40));
    expect(carried.files.find((f) => f.path === 'naïve notes #1.md')?.url).toMatch(/\/na%C3%AFve%20notes%20%231\.md$/);
    expect(carried.assets.length).toBeGreaterThan(0);
    expect(carried.assets.every((a) => a.url.includes('b'.repeat(40)))).toBe(true);
    const txt = (await readOutput(join(carriedDir, ARTIFACT_FILE_NAMES.txt))).toString('utf8');
    expect(txt).not.toContain('a'.repeat(40));
    expect(comparableReport(carried)).toEqual(comparableReport(fresh));
    await expectSameOutputs(freshDir, carriedDir);
  });

  it('scans as usual when an earlier output lost bytes', async () => {
    const earlier = await earlierScan({});
    const path = earlier.files[0]?.path as string;
    await appendFile(join(tree.root, path), 'x\n');
    const json = await readFile(earlier.outputs.json);
    await writeFile(earlier.outputs.json, json.subarray(0, json.length >> 1));
    const { fresh, carried, freshDir, carriedDir } = await bothWays(earlier, [path], {});
    expect(carried.carried).toBeUndefined();
    expect(comparableReport(carried)).toEqual(comparableReport(fresh));
    await expectSameOutputs(freshDir, carriedDir);
    expect((await readdir(carriedDir)).sort()).toEqual(['output.json', 'output.md', 'output.txt']);
  });

  it('scans as usual when a piece of a spliced earlier output lost bytes', async () => {
    const first = await earlierScan({});
    const [a, b] = twoPaths(first);
    await appendFile(join(tree.root, a), 'x\n');
    const carriedDir = await folder('spliced');
    const report = await runScan(
      { ...input(carriedDir, {}), keepLayout: true, earlier: { ...first, changed: new Set([a]) } },
      deps,
    );
    // Its own piece holds the changed block of `a`, which the next carry (of `b`) refers to.
    await truncate(join(carriedDir, 'output.md.piece-0'), 10);
    await appendFile(join(tree.root, b), 'y\n');
    const { fresh, carried, freshDir, carriedDir: again } = await bothWays(earlierScanOf(report, carriedDir), [b], {});
    expect(carried.carried).toBeUndefined();
    expect(comparableReport(carried)).toEqual(comparableReport(fresh));
    await expectSameOutputs(freshDir, again);
    expect((await readdir(again)).sort()).toEqual(['output.json', 'output.md', 'output.txt']);
  });

  it('refuses, writing nothing, when it cannot carry and must not scan as usual', async () => {
    const earlier = await earlierScan({});
    const [first, second] = earlier.files.map((f) => f.path);
    await appendFile(join(tree.root, first as string), 'x\n');
    const lost = await readFile(earlier.outputs.md);
    await writeFile(earlier.outputs.md, lost.subarray(0, lost.length >> 1));
    const refusing = (outDir: string, changed: string[]) =>
      runScan({ ...input(outDir, {}), earlier: { ...earlier, changed: new Set(changed), fallback: 'refuse' } }, deps);
    const damaged = await folder('damaged');
    await expect(refusing(damaged, [first as string])).rejects.toBeInstanceOf(CarryRefusedError);
    expect(await readdir(damaged)).toEqual([]);
    await writeFile(join(tree.root, second as string), Buffer.from([0, 1, 2, 3, 0, 0, 0xff, 0xfe, 0]));
    const binary = await folder('binary');
    await expect(refusing(binary, [second as string])).rejects.toBeInstanceOf(CarryRefusedError);
    expect(await readdir(binary)).toEqual([]);
  });

  it('stores a carried output spliced, with pieces of the earlier ones, and whole again once those are 16', async () => {
    const chain = Array.from({ length: 18 }, (_, i) => `chain/part-${String(i).padStart(2, '0')}.md`);
    for (const path of chain) {
      await mkdir(join(tree.root, 'chain'), { recursive: true });
      await writeFile(join(tree.root, path), `# ${path}\n`);
    }
    let earlier = await earlierScan({});
    for (const [i, path] of chain.entries()) {
      // Each commit changes another file: every earlier commit's own piece still holds a block.
      await appendFile(join(tree.root, path), `change ${i}\n`);
      const outDir = await folder(`carried-${i}`);
      const carried = await runScan(
        { ...input(outDir, {}), keepLayout: true, earlier: { ...earlier, changed: new Set([path]) } },
        deps,
      );
      expect(carried.carried).toBe(earlier.files.length - 1);
      const stored = await readdir(outDir);
      // Commit i has pieces: its own, the first scan's output, and the own pieces of commits 0 to i-1,
      // until 16 (commit 14's); commit 15 then writes its outputs whole, and commit 16 splices again.
      const pieces = i < 15 ? i + 2 : i === 15 ? 0 : i - 14;
      expect(stored.filter((name) => name.startsWith('output.txt.piece-')).length, `commit ${i}`).toBe(pieces);
      expect(stored.includes('output.txt'), `commit ${i}`).toBe(pieces === 0);
      earlier = earlierScanOf(carried, outDir);
    }
    const freshDir = await folder('fresh');
    await runScan(input(freshDir, {}), deps);
    await expectSameOutputs(freshDir, join(base, `carried-${chain.length - 1}`));
  });

  it('tells from the paths alone whether a change may be carried', async () => {
    const { files, assets } = await earlierScan({});
    expect(mayCarry(files, new Set())).toBe(true);
    expect(mayCarry(files, new Set([files[0]?.path as string]))).toBe(true);
    // An asset, a path the scan never listed, or an ignore file: only a walk takes those in.
    expect(mayCarry(files, new Set([assets[0]?.path as string]))).toBe(false);
    expect(mayCarry(files, new Set(['no/such/file.ts']))).toBe(false);
    const withIgnore = [...files, { ...(files[0] as ScannedFileRecord), path: 'src/.gitignore' }];
    expect(mayCarry(withIgnore, new Set(['src/.gitignore']))).toBe(false);
    // More than a carry holds in memory, by the sizes the earlier scan saw.
    const huge = [{ ...(files[0] as ScannedFileRecord), size_bytes: 33 << 20 }];
    expect(mayCarry(huge, new Set([huge[0]?.path as string]))).toBe(false);
  });
});
