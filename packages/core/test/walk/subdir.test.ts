import { describe, expect, it } from 'vitest';
import { useTempTrees, walk } from './walk-fixture.js';

const tree = useTempTrees();

describe('subdir scans', () => {
  const spec = {
    '.gitignore': '*.log\nsecret/\n',
    'README.md': 'x',
    'packages/.gitignore': '*.tmp\n',
    'packages/app/.gitignore': '!keep.log\n',
    'packages/app/main.ts': 'x',
    'packages/app/debug.log': 'x',
    'packages/app/keep.log': 'x',
    'packages/app/cache.tmp': 'x',
    'packages/app/secret/key.txt': 'x',
    'packages/app/src/index.ts': 'x',
    'packages/other/x.ts': 'x',
  };

  it('lists only the subdir, keeping the subdir/ prefix, with the ignore files above it applied', async () => {
    const root = await tree(spec);
    const result = await walk(root, { subdir: 'packages/app' });
    expect(result.paths).toEqual([
      'packages/app/src/index.ts',
      'packages/app/.gitignore',
      'packages/app/keep.log',
      'packages/app/main.ts',
    ]);
    expect(result.reasons).toEqual({
      'packages/app/cache.tmp': 'ignored',
      'packages/app/debug.log': 'ignored',
      'packages/app/secret/': 'ignored',
    });
    expect(result.files[0]?.absPath.endsWith('index.ts')).toBe(true);
  });

  it('tolerates stray slashes around the subdir', async () => {
    const root = await tree(spec);
    expect((await walk(root, { subdir: '/packages/app/' })).paths).toHaveLength(4);
  });

  it('scans a subdir that an ignore file above it ignores, applying the other rules inside it', async () => {
    const root = await tree({ '.gitignore': 'vendor/\n*.log\n', 'vendor/lib/a.js': 'x', 'vendor/lib/b.log': 'x' });
    const result = await walk(root, { subdir: 'vendor' });
    expect(result.paths).toEqual(['vendor/lib/a.js']);
    expect(result.reasons).toEqual({ 'vendor/lib/b.log': 'ignored' });
  });

  it.each([['..'], ['a/../..'], ['./a']])('refuses a subdir that could leave the root: %s', async (subdir) => {
    const root = await tree({ 'a/x.txt': 'x' });
    await expect(walk(root, { subdir })).rejects.toMatchObject({ code: 'SUBDIR_INVALID' });
  });

  it('refuses a subdir that is missing or a file', async () => {
    const root = await tree({ 'a/x.txt': 'x' });
    await expect(walk(root, { subdir: 'b' })).rejects.toMatchObject({ code: 'SUBDIR_NOT_FOUND' });
    await expect(walk(root, { subdir: 'a/x.txt' })).rejects.toMatchObject({ code: 'SUBDIR_NOT_FOUND' });
  });
});
