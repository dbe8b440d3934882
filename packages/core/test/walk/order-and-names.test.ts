import { describe, expect, it } from 'vitest';
import { compareNames } from '../../src/path-order.js';
import { useTempTrees, onWindows, walk } from './walk-fixture.js';

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
    const root = await tree({ '.gitignore': '*.log\n', 'z.log': 'x', 'a/b.log': 'x', 'node_modules/x': 'x', 'B.log': 'x' });
    expect((await walk(root)).skipped.map((entry) => entry.path)).toEqual(['B.log', 'a/b.log', 'node_modules/', 'z.log']);
  });
});

describe('names and shapes', () => {
  it.skipIf(onWindows)('keeps names with a newline, a carriage return, an escape or unicode as they are', async () => {
    const names = ['new\nline.txt', 'cr\r.txt', '\u001b[31mred.txt', 'ünïcödé.txt', '日本語.md', 'emoji-😀.txt', ' lead space'];
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
