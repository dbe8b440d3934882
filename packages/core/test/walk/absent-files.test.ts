// A clone may leave files off the disk that a scan takes from its file cache; the source names
// them with their sizes (WalkInput.absent) and the walk lists them as if they were there.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { IoThreads } from '../../src/io/io-threads.js';
import { DEFAULT_ENGINE_LIMITS } from '../../src/types.js';
import type { WalkedFile } from '../../src/types.js';
import { walkTree } from '../../src/walk/index.js';
import type { WalkInput } from '../../src/walk/index.js';
import { defaultOptions, useTempTrees } from './walk-fixture.js';

const tree = useTempTrees();

const FULL = {
  'README.md': '# repo\n',
  '.gitignore': 'build/\n',
  'src/a.ts': 'export const a = 1;\n',
  'src/deep/b.ts': 'export const b = 2;\n',
  'src/deep/c.ts': 'export const c = 3;\n',
  'docs/guide.md': '# guide\n',
  'build/out.js': 'ignored\n',
};

function input(root: string, absent?: ReadonlyMap<string, number>, extra: Partial<WalkInput> = {}): WalkInput {
  return {
    root,
    subdir: null,
    options: defaultOptions(),
    limits: DEFAULT_ENGINE_LIMITS,
    ...(absent ? { absent } : {}),
    ...extra,
  };
}

const summary = (files: WalkedFile[]) => files.map((f) => [f.path, f.size]);

describe('files the source says are not on disk', () => {
  it('are walked in the same order, with the same sizes, as the full tree: here and on an io thread', async () => {
    const full = await walkTree(input(await tree(FULL)));
    // The same tree with src/deep/ (a whole folder) and docs/guide.md taken off the disk.
    const partial = await tree(FULL);
    await rm(join(partial, 'src', 'deep'), { recursive: true });
    await rm(join(partial, 'docs', 'guide.md'));
    const absent = new Map(
      full.files
        .filter((f) => f.path.startsWith('src/deep/') || f.path === 'docs/guide.md')
        .map((f) => [f.path, f.size]),
    );
    expect(absent.size).toBe(3);
    const here = await walkTree(input(partial, absent));
    expect(summary(here.files)).toEqual(summary(full.files));
    expect(here.skipped).toEqual(full.skipped);
    expect(here.files.find((f) => f.path === 'src/deep/b.ts')?.absPath).toBe(join(partial, 'src', 'deep', 'b.ts'));

    const files: WalkedFile[] = [];
    const io = new IoThreads();
    const skipped = await io.walk(input(partial, absent), (chunk) => files.push(...chunk)).finally(() => io.close());
    expect(summary(files)).toEqual(summary(full.files));
    expect(skipped).toEqual(full.skipped);
  });

  it('follow the filters: size limit, patterns and ignore rules apply as to files on disk', async () => {
    const partial = await tree({ 'README.md': '# repo\n', '.gitignore': 'build/\n' });
    const absent = new Map([
      ['src/small.ts', 10],
      ['src/huge.ts', 50_000],
      ['build/out.js', 5],
    ]);
    const result = await walkTree(input(partial, absent, { options: { ...defaultOptions(), sizeLimit: 1000 } }));
    expect(summary(result.files)).toEqual([
      ['src/small.ts', 10],
      ['.gitignore', 7],
      ['README.md', 7],
    ]);
    expect(result.skipped).toEqual([
      { path: 'build/', reason: 'ignored' },
      { path: 'src/huge.ts', reason: 'too_large' },
    ]);
  });

  it('a file that is on disk after all is measured there', async () => {
    const root = await tree({ 'a.txt': 'twelve bytes' });
    const result = await walkTree(input(root, new Map([['a.txt', 999]])));
    expect(summary(result.files)).toEqual([['a.txt', 12]]);
  });
});
