import { describe, expect, it } from 'vitest';
import type { WalkDeps } from '../../src/walk/index.js';
import { nodeWalkFs } from '../../src/walk/index.js';
import { useTempTrees, walk } from './walk-fixture.js';

const tree = useTempTrees();

/** Real file system calls that finish in a random order, to shake out timing dependence. */
function jittered(seed: number): Partial<WalkDeps> {
  let state = seed;
  const delay = () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return new Promise<void>((resolve) => setTimeout(resolve, state % 5));
  };
  return {
    openFolder: async (abs) => (await delay(), nodeWalkFs.openFolder(abs)),
    readdir: async (folder) => (await delay(), nodeWalkFs.readdir(folder)),
    lstat: async (folder, name) => (await delay(), nodeWalkFs.lstat(folder, name)),
  };
}

describe('file sizes', () => {
  const spec = {
    'small.txt': 'x'.repeat(10),
    'edge.txt': 'x'.repeat(100),
    'big.txt': 'x'.repeat(101),
    'empty.txt': '',
  };

  it('skips files over size_limit as too_large; a file at the limit is kept', async () => {
    const root = await tree(spec);
    const result = await walk(root, { options: { sizeLimit: 100 } });
    expect(result.paths).toEqual(['edge.txt', 'empty.txt', 'small.txt']);
    expect(result.skipped).toEqual([{ path: 'big.txt', reason: 'too_large' }]);
    expect(result.files.map((file) => file.size)).toEqual([100, 0, 10]);
  });

  it('applies the engine per-file limit whatever size_limit says', async () => {
    const root = await tree(spec);
    const result = await walk(root, { options: { sizeLimit: 1_000_000 }, limits: { maxFileBytes: 50 } });
    expect(result.paths).toEqual(['empty.txt', 'small.txt']);
    expect(result.reasons).toEqual({ 'big.txt': 'too_large', 'edge.txt': 'too_large' });
  });

  it('takes the smaller of the two', async () => {
    const root = await tree(spec);
    const result = await walk(root, { options: { sizeLimit: 5 }, limits: { maxFileBytes: 50 } });
    expect(result.paths).toEqual(['empty.txt']);
  });
});

describe('maxDepth', () => {
  const spec = {
    'f0.txt': 'x',
    'a/f1.txt': 'x',
    'a/b/f2.txt': 'x',
    'a/b/c/f3.txt': 'x',
    'a/b/c/d/f4.txt': 'x',
    'z/f1.txt': 'x',
  };

  it.each([
    [0, ['f0.txt'], { 'a/': 'limit', 'z/': 'limit' }],
    [1, ['a/f1.txt', 'z/f1.txt', 'f0.txt'], { 'a/b/': 'limit' }],
    [2, ['a/b/f2.txt', 'a/f1.txt', 'z/f1.txt', 'f0.txt'], { 'a/b/c/': 'limit' }],
    [4, ['a/b/c/d/f4.txt', 'a/b/c/f3.txt', 'a/b/f2.txt', 'a/f1.txt', 'z/f1.txt', 'f0.txt'], {}],
  ])(
    'maxDepth %i lists folders that many levels down and records the next level once',
    async (maxDepth, paths, reasons) => {
      const root = await tree(spec);
      const result = await walk(root, { limits: { maxDepth } });
      expect(result.paths).toEqual(paths);
      expect(result.reasons).toEqual(reasons);
    },
  );

  it('counts levels from the subdir in a subdir scan', async () => {
    const root = await tree(spec);
    const result = await walk(root, { subdir: 'a', limits: { maxDepth: 1 } });
    expect(result.paths).toEqual(['a/b/f2.txt', 'a/f1.txt']);
    expect(result.reasons).toEqual({ 'a/b/c/': 'limit' });
  });
});

describe('maxFiles', () => {
  const spec: Record<string, string> = {};
  for (const folder of ['a', 'b', 'b/x', 'c']) for (const n of [1, 2, 3]) spec[`${folder}/f${n}.txt`] = 'x';
  spec['top.txt'] = 'x';

  it('keeps the first files in output order and records the rest as limit', async () => {
    const root = await tree(spec);
    const result = await walk(root, { limits: { maxFiles: 5 } });
    expect(result.paths).toEqual(['a/f1.txt', 'a/f2.txt', 'a/f3.txt', 'b/x/f1.txt', 'b/x/f2.txt']);
    // The rest of the current folder file by file, then each folder not entered once, then files above.
    expect(result.reasons).toEqual({
      'b/x/f3.txt': 'limit',
      'b/f1.txt': 'limit',
      'b/f2.txt': 'limit',
      'b/f3.txt': 'limit',
      'c/': 'limit',
      'top.txt': 'limit',
    });
  });

  it('records nothing when the tree holds exactly maxFiles files', async () => {
    const root = await tree(spec);
    const result = await walk(root, { limits: { maxFiles: 13 } });
    expect(result.paths).toHaveLength(13);
    expect(result.skipped).toEqual([]);
  });

  it('gives the same result whatever order the file system answers in', async () => {
    const big: Record<string, string> = { '.gitignore': '*.log\n' };
    for (let i = 0; i < 12; i += 1) {
      for (let j = 0; j < 6; j += 1) {
        big[`d${i}/e${j}/f.txt`] = 'x';
        big[`d${i}/e${j}/g.log`] = 'x';
      }
      big[`d${i}/h.txt`] = 'x';
    }
    const root = await tree(big);
    const runs = await Promise.all(
      [1, 2, 3, 4, 5].map((seed) => walk(root, { limits: { maxFiles: 40 }, deps: jittered(seed) })),
    );
    const reference = await walk(root, { limits: { maxFiles: 40 } });
    expect(reference.files).toHaveLength(40);
    for (const run of runs) {
      expect(run.files).toEqual(reference.files);
      expect(run.skipped).toEqual(reference.skipped);
    }
  });
});
