import { spawnSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { WalkDirent } from '../../src/walk/index.js';
import { PROVES_PATHS } from '../../src/io/proven-path.js';
import { nodeWalkFs } from '../../src/walk/index.js';
import { onWindows, useTempTrees, walk } from './walk-fixture.js';

const tree = useTempTrees();
const hasMkfifo = !onWindows && spawnSync('mkfifo', ['--version']).error === undefined;

describe.skipIf(onWindows)('symbolic links are never followed', () => {
  it('skips a link to a file outside the root without listing its target', async () => {
    const outside = await tree({ 'secret.txt': 'top secret' });
    const root = await tree({ 'leak.txt': { link: join(outside, 'secret.txt') }, 'a.txt': 'x' });
    const result = await walk(root);
    expect(result.paths).toEqual(['a.txt']);
    expect(result.skipped).toEqual([{ path: 'leak.txt', reason: 'symlink' }]);
    expect(result.files.every((file) => file.absPath.startsWith(root))).toBe(true);
  });

  it('skips a link to a folder outside the root, and to the file-system root', async () => {
    const outside = await tree({ 'x/secret.txt': 'top secret' });
    const root = await tree({ ext: { link: join(outside, 'x') }, slash: { link: '/' }, up: { link: '../..' } });
    const result = await walk(root);
    expect(result.paths).toEqual([]);
    expect(result.skipped).toEqual([
      { path: 'ext', reason: 'symlink' },
      { path: 'slash', reason: 'symlink' },
      { path: 'up', reason: 'symlink' },
    ]);
  });

  it('does not loop on a -> . or a -> b -> a', async () => {
    const root = await tree({ 'd/a': { link: '.' }, x: { link: 'y' }, y: { link: 'x' }, 'd/f.txt': 'x' });
    const result = await walk(root);
    expect(result.paths).toEqual(['d/f.txt']);
    expect(result.reasons).toEqual({ 'd/a': 'symlink', x: 'symlink', y: 'symlink' });
  });

  it('does not follow links named like folders or matched by folder rules', async () => {
    const outside = await tree({ 'lib/index.js': 'x' });
    const root = await tree({
      '.gitignore': 'build/\n',
      build: { link: outside },
      src: { link: join(outside, 'lib') },
    });
    const result = await walk(root);
    expect(result.paths).toEqual(['.gitignore']);
    // `build/` only matches folders; a link is not one (as in git).
    expect(result.reasons).toEqual({ build: 'symlink', src: 'symlink' });
  });

  it('reports a link an ignore file matches as ignored', async () => {
    const root = await tree({ '.gitignore': '*.lnk\n', 'a.lnk': { link: '/etc/passwd' } });
    expect((await walk(root)).reasons).toEqual({ 'a.lnk': 'ignored' });
  });

  it('refuses a root that is itself a link, and a subdir reached through one', async () => {
    const real = await tree({ 'a.txt': 'x', 'sub/b.txt': 'x' });
    const root = await tree({ via: { link: real } });
    await expect(walk(join(root, 'via'))).rejects.toMatchObject({ code: 'ROOT_NOT_A_DIRECTORY' });
    await expect(walk(root, { subdir: 'via/sub' })).rejects.toMatchObject({ code: 'SUBDIR_NOT_FOUND' });
  });

  it('records a folder swapped for a link after its parent was listed', async () => {
    const outside = await tree({ 'secret.txt': 'x' });
    const root = await tree({ 'dir/a.txt': 'x', link: { link: outside } });
    // The listing of the root saw a folder; by the time it is opened, it is a link.
    const result = await walk(root, {
      deps: { openFolder: (abs) => nodeWalkFs.openFolder(abs === join(root, 'dir') ? join(root, 'link') : abs) },
    });
    expect(result.paths).toEqual([]);
    // Opened as a folder, a link is refused without a second look that could tell it from a file.
    expect(result.reasons).toEqual({ 'dir/': PROVES_PATHS ? 'unreadable' : 'symlink', link: 'symlink' });
  });
});

describe('special files', () => {
  it.skipIf(!hasMkfifo)('skips a FIFO as unreadable without blocking', async () => {
    const root = await tree({ 'a.txt': 'x', 'sub/b.txt': 'x' });
    expect(spawnSync('mkfifo', [join(root, 'pipe'), join(root, 'sub', '.gitignore')]).status).toBe(0);
    const result = await walk(root);
    expect(result.paths).toEqual(['sub/b.txt', 'a.txt']);
    expect(result.reasons).toEqual({ pipe: 'unreadable', 'sub/.gitignore': 'unreadable' });
  });

  it('skips sockets and devices (any non-regular, non-folder entry) as unreadable', async () => {
    const root = await tree({ 'a.txt': 'x' });
    const device: WalkDirent = {
      name: 'dev0',
      isFile: () => false,
      isDirectory: () => false,
      isSymbolicLink: () => false,
    };
    const result = await walk(root, {
      deps: {
        readdir: async (folder) =>
          folder.abs === root ? [...(await nodeWalkFs.readdir(folder)), device] : nodeWalkFs.readdir(folder),
      },
    });
    expect(result.paths).toEqual(['a.txt']);
    expect(result.skipped).toEqual([{ path: 'dev0', reason: 'unreadable' }]);
  });
});

describe('unreadable entries do not stop the walk', () => {
  it('records a folder that cannot be listed and goes on', async () => {
    const root = await tree({ 'locked/a.txt': 'x', 'open/b.txt': 'x', 'c.txt': 'x' });
    const result = await walk(root, {
      deps: {
        readdir: (folder) =>
          folder.abs === join(root, 'locked') ? Promise.reject(new Error('EACCES')) : nodeWalkFs.readdir(folder),
      },
    });
    expect(result.paths).toEqual(['open/b.txt', 'c.txt']);
    expect(result.skipped).toEqual([{ path: 'locked/', reason: 'unreadable' }]);
  });

  it('records a file that vanished or turned into something else after the listing', async () => {
    const root = await tree({ 'gone.txt': 'x', 'changed.txt': 'x', 'kept.txt': 'x' });
    await mkdir(join(root, 'now-a-dir'));
    await writeFile(join(root, 'now-a-dir.txt'), 'x');
    const result = await walk(root, {
      deps: {
        lstat: (folder, name) => {
          if (name === 'gone.txt') return Promise.reject(new Error('ENOENT'));
          if (name === 'now-a-dir.txt') return nodeWalkFs.lstat(folder, 'now-a-dir');
          return nodeWalkFs.lstat(folder, name);
        },
      },
    });
    expect(result.paths).toEqual(['changed.txt', 'kept.txt']);
    expect(result.reasons).toEqual({ 'gone.txt': 'unreadable', 'now-a-dir.txt': 'unreadable' });
  });

  it('fails with the error of a per-file filter that throws, leaving nothing running', async () => {
    const root = await tree({ 'a/b/c.txt': 'x', 'a/d.txt': 'x', 'e/f.txt': 'x', 'g.txt': 'x' });
    const acceptFile = (path: string) => {
      if (path === 'e/f.txt') throw new Error('filter bug');
      return true;
    };
    await expect(walk(root, { acceptFile })).rejects.toThrow('filter bug');
  });

  it('fails clearly when the scan root cannot be listed', async () => {
    const root = await tree({ 'a.txt': 'x' });
    const result = walk(root, { deps: { readdir: () => Promise.reject(new Error('EACCES')) } });
    await expect(result).rejects.toMatchObject({ name: 'ScanRootError', code: 'ROOT_UNREADABLE' });
  });
});
