import { describe, expect, it } from 'vitest';
import { compareNames } from '../../src/path-order.js';
import { DEFAULT_ENGINE_LIMITS } from '../../src/types.js';
import { nodeWalkFs, walkTreeInto } from '../../src/walk/index.js';
import { syncWalkFs } from '../../src/walk/node-walk-fs.js';
import type { WalkDeps } from '../../src/walk/index.js';
import { defaultOptions, useTempTrees, onWindows, walk } from './walk-fixture.js';

const tree = useTempTrees();

describe('output order', () => {
  it('is depth-first, folders before files, names compared case-insensitively', async () => {
    const root = await tree({
      'b.txt': 'x',
      'A.txt': 'x',
      'a2.txt': 'x',
      'Zeta/z.txt': 'x',
      'alpha/Beta/y.txt': 'x',
      'alpha/beta.txt': 'x',
      'alpha/a/x.txt': 'x',
      '_under.txt': 'x',
      '.hidden': 'x',
    });
    expect((await walk(root)).paths).toEqual([
      'alpha/a/x.txt',
      'alpha/Beta/y.txt',
      'alpha/beta.txt',
      'Zeta/z.txt',
      '.hidden',
      '_under.txt',
      'A.txt',
      'a2.txt',
      'b.txt',
    ]);
  });

  it.skipIf(process.platform !== 'linux')('breaks case ties by code units, as compareNames does', async () => {
    const names = ['readme', 'README', 'ReadMe', 'Ärger', 'ärger', 'b', 'B', 'a-b', 'a_b', 'a.b'];
    const root = await tree(Object.fromEntries(names.map((name) => [name, 'x'])));
    expect((await walk(root)).paths).toEqual([...names].sort(compareNames));
  });

  it('sorts skipped paths by path', async () => {
    const root = await tree({
      '.gitignore': '*.log\n',
      'z.log': 'x',
      'a/b.log': 'x',
      'node_modules/x': 'x',
      'B.log': 'x',
    });
    expect((await walk(root)).skipped.map((entry) => entry.path)).toEqual([
      'B.log',
      'a/b.log',
      'node_modules/',
      'z.log',
    ]);
  });
});

describe('names and shapes', () => {
  it.skipIf(onWindows)('keeps names with a newline, a carriage return, an escape or unicode as they are', async () => {
    const names = [
      'new\nline.txt',
      'cr\r.txt',
      '\u001b[31mred.txt',
      'ünïcödé.txt',
      '日本語.md',
      'emoji-😀.txt',
      ' lead space',
    ];
    const root = await tree(Object.fromEntries(names.map((name) => [`dir\nname/${name}`, 'x'])));
    const result = await walk(root);
    expect([...result.paths].sort()).toEqual(names.map((name) => `dir\nname/${name}`).sort());
    expect(result.skipped).toEqual([]);
  });

  it('returns nothing for an empty tree', async () => {
    const root = await tree();
    expect(await walk(root)).toMatchObject({ files: [], skipped: [] });
  });

  it('produces nothing for empty folders', async () => {
    const root = await tree({ 'empty/': null, 'nested/empty/deeper/': null, 'a.txt': 'x' });
    const result = await walk(root);
    expect(result.paths).toEqual(['a.txt']);
    expect(result.skipped).toEqual([]);
  });

  it('gives POSIX root-relative paths and absolute paths on this host', async () => {
    const root = await tree({ 'a/b/c.txt': 'hello' });
    const [file] = (await walk(root)).files;
    expect(file?.path).toBe('a/b/c.txt');
    expect(file?.size).toBe(5);
    expect(file?.absPath.startsWith(root)).toBe(true);
  });
});

describe('streaming', () => {
  // 30 folders of 20 files after a first, deeper one: a walk that listed ahead would have listed
  // most of them before handing on a single file.
  const spec: Record<string, string> = { 'a/deep/one.ts': 'x', 'a/deep/two.ts': 'x' };
  for (let d = 0; d < 30; d++) for (let f = 0; f < 20; f++) spec[`m${String(d).padStart(2, '0')}/f${f}.ts`] = 'x';

  it.each([
    ['blocking calls', syncWalkFs, 5],
    ['async calls', nodeWalkFs, Infinity],
  ])(
    'with %s, hands on the first files early, in small chunks, in the same order',
    async (_label, fs, maxListedFirst) => {
      const root = await tree(spec);
      let listed = 0;
      const counting: WalkDeps = { ...fs, readdir: (folder) => (listed++, fs.readdir(folder)) };
      const chunks: Array<{ size: number; listed: number }> = [];
      const paths: string[] = [];
      await walkTreeInto(
        { root, subdir: null, options: defaultOptions(), limits: DEFAULT_ENGINE_LIMITS },
        (chunk) => {
          chunks.push({ size: chunk.length, listed });
          paths.push(...chunk.map((file) => file.path));
        },
        counting,
      );
      expect(paths).toEqual((await walk(root)).paths);
      // The root, a/, a/deep/, m00/ and m01/ hold the first 32 files: all a blocking walk lists for them.
      expect(chunks[0]?.listed).toBeLessThanOrEqual(maxListedFirst);
      expect(chunks[0]?.size).toBeLessThanOrEqual(32);
      expect(chunks.map((c) => c.size).every((size, i, all) => i === all.length - 1 || size <= 256)).toBe(true);
    },
  );
});
