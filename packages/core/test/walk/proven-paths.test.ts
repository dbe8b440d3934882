// Every open of a walk or a read is proven to be inside the scanned tree: a folder on the way
// that is a link (or was swapped for one) is never followed, and a folder once opened is listed,
// measured and read through its own handle, whatever happens to its path afterwards.
import { rename, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROVES_PATHS } from '../../src/io/proven-path.js';
import { readFileBytesSync, readFilesSync, type ReadOutcome } from '../../src/io/read-file-bytes.js';
import { syncWalkFs } from '../../src/walk/node-walk-fs.js';
import { nodeWalkFs } from '../../src/walk/index.js';
import { useTempTrees, walk } from './walk-fixture.js';

const tree = useTempTrees();

describe.skipIf(!PROVES_PATHS)('opens proven inside the tree', () => {
  describe.each([
    ['async calls', nodeWalkFs],
    ['blocking calls', syncWalkFs],
  ])('a folder opened with %s', (_label, fs) => {
    it('is refused when a folder on the way is a link, or when it is a link itself', async () => {
      const outside = await tree({ 'x/secret.txt': 'outside' });
      const root = await tree({ via: { link: outside }, ln: { link: join(outside, 'x') } });
      await expect(fs.openFolder(join(root, 'via', 'x'))).rejects.toMatchObject({ code: 'EMOVED' });
      await expect(fs.openFolder(join(root, 'ln'))).rejects.toMatchObject({ code: 'ENOTDIR' });
    });

    it('is listed, measured and read through its handle after being swapped for a link to outside', async () => {
      const outside = await tree({ 'x/a.txt': 'OUTSIDE', 'x/.gitignore': 'OUTSIDE', 'x/only-outside.txt': 'OUTSIDE' });
      const root = await tree({ 'sub/a.txt': 'inside', 'sub/.gitignore': '*.log\n' });
      const folder = await fs.openFolder(join(root, 'sub'));
      try {
        await rename(join(root, 'sub'), join(root, 'moved'));
        await symlink(join(outside, 'x'), join(root, 'sub'));
        expect((await fs.readdir(folder)).map((entry) => entry.name).sort()).toEqual(['.gitignore', 'a.txt']);
        expect((await fs.lstat(folder, 'a.txt')).size).toBe('inside'.length);
        await expect(fs.lstat(folder, 'only-outside.txt')).rejects.toMatchObject({ code: 'ENOENT' });
        expect(Buffer.from(await fs.readFile(folder, '.gitignore', 100)).toString()).toBe('*.log\n');
      } finally {
        await fs.closeFolder(folder);
      }
    });
  });

  it('reads no file through a folder on the way that is a link, in a batch or alone', async () => {
    const outside = await tree({ 'x/a.txt': 'OUTSIDE', 'x/b.txt': 'OUTSIDE' });
    const root = await tree({
      'sub/a.txt': 'inside a',
      'sub/b.txt': 'inside b',
      'sub/c.txt': { link: 'a.txt' },
      'd.txt': 'inside d',
      ln: { link: join(outside, 'x') },
    });
    const text = (outcome: ReadOutcome) => (outcome.ok ? Buffer.from(outcome.bytes).toString() : outcome.reason);
    const paths = ['sub/a.txt', 'ln/a.txt', 'ln/b.txt', 'sub/b.txt', 'sub/c.txt', 'd.txt', 'sub/gone.txt'];
    expect(
      readFilesSync(
        paths.map((p) => ({ absPath: join(root, p) })),
        100,
      ).map(text),
    ).toEqual(['inside a', 'unreadable', 'unreadable', 'inside b', 'symlink', 'inside d', 'unreadable']);
    expect(text(readFileBytesSync(join(root, 'ln', 'a.txt'), 100))).toBe('unreadable');
    expect(text(readFileBytesSync(join(root, 'sub', 'a.txt'), 100))).toBe('inside a');
  });

  it('refuses a root given through a link on the way: its real path is what every open is proven against', async () => {
    const real = await tree({ 'sub/a.txt': 'x' });
    const root = await tree({ via: { link: real } });
    await expect(walk(join(root, 'via', 'sub'))).rejects.toMatchObject({ name: 'ScanRootError', code: 'ROOT_MOVED' });
    expect((await walk(join(real, 'sub'))).paths).toEqual(['a.txt']);
  });

  it('skips a folder that is not where its parent listed it, listing nothing from where the open led', async () => {
    const outside = await tree({ 'x/secret.txt': 'OUTSIDE' });
    const root = await tree({ 'dir/a.txt': 'x', 'b.txt': 'x', ln: { link: outside } });
    // As if a folder on the way to `dir` had been swapped for a link between the listing and the open.
    const result = await walk(root, {
      deps: { openFolder: (abs) => nodeWalkFs.openFolder(abs === join(root, 'dir') ? join(root, 'ln', 'x') : abs) },
    });
    expect(result.paths).toEqual(['b.txt']);
    expect(result.reasons).toEqual({ 'dir/': 'unreadable', ln: 'symlink' });
  });
});
