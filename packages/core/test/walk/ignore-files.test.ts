import { describe, expect, it } from 'vitest';
import { nodeWalkFs } from '../../src/walk/index.js';
import { onWindows, useTempTrees, walk } from './walk-fixture.js';

const tree = useTempTrees();

describe('sync_ignore: .gitignore files', () => {
  it('applies negation: the last matching line wins', async () => {
    const root = await tree({
      '.gitignore': '*.log\n!keep.log\n',
      'a.log': 'x',
      'keep.log': 'x',
      'sub/b.log': 'x',
      'sub/keep.log': 'x',
    });
    const result = await walk(root);
    expect(result.paths).toEqual(['sub/keep.log', '.gitignore', 'keep.log']);
    expect(result.reasons).toEqual({ 'a.log': 'ignored', 'sub/b.log': 'ignored' });
  });

  it('anchors a pattern holding a slash to the ignore file’s folder', async () => {
    const root = await tree({
      '.gitignore': '/top.txt\nsrc/gen.ts\n',
      'top.txt': 'x',
      'sub/top.txt': 'x',
      'src/gen.ts': 'x',
      'lib/src/gen.ts': 'x',
      'lib/.gitignore': '/local.txt\n',
      'lib/local.txt': 'x',
      'local.txt': 'x',
    });
    const result = await walk(root);
    expect(result.paths).toEqual(['lib/src/gen.ts', 'lib/.gitignore', 'sub/top.txt', '.gitignore', 'local.txt']);
    expect(result.reasons).toEqual({ 'lib/local.txt': 'ignored', 'src/gen.ts': 'ignored', 'top.txt': 'ignored' });
  });

  it('prunes ignored folders once, and a file below one cannot be re-included', async () => {
    const root = await tree({
      '.gitignore': 'build/\n!build/keep.txt\n',
      'build/keep.txt': 'x',
      'build/.gitignore': '!keep.txt\n',
      'pkg/build/out.js': 'x',
      'pkg/index.js': 'x',
    });
    const result = await walk(root);
    expect(result.paths).toEqual(['pkg/index.js', '.gitignore']);
    expect(result.skipped).toEqual([
      { path: 'build/', reason: 'ignored' },
      { path: 'pkg/build/', reason: 'ignored' },
    ]);
  });

  it('applies directory-only rules to folders, not to files of that name', async () => {
    const root = await tree({ '.gitignore': 'out/\n', 'out/a.js': 'x', 'src/out': 'a file named out' });
    const result = await walk(root);
    expect(result.paths).toEqual(['src/out', '.gitignore']);
    expect(result.skipped).toEqual([{ path: 'out/', reason: 'ignored' }]);
  });

  it('lets a deeper ignore file override a shallower one, both ways', async () => {
    const root = await tree({
      '.gitignore': '*.md\nbuild/\n',
      'README.md': 'x',
      'docs/.gitignore': '!*.md\n*.txt\n',
      'docs/guide.md': 'x',
      'docs/notes.txt': 'x',
      'src/.gitignore': '!build/\n',
      'src/build/out.js': 'x',
      'src/build/notes.md': 'x',
      'build/out.js': 'x',
    });
    const result = await walk(root);
    expect(result.paths).toEqual([
      'docs/.gitignore',
      'docs/guide.md',
      'src/build/out.js',
      'src/.gitignore',
      '.gitignore',
    ]);
    expect(result.reasons).toEqual({
      'build/': 'ignored',
      'docs/notes.txt': 'ignored',
      'README.md': 'ignored',
      'src/build/notes.md': 'ignored',
    });
  });

  it('handles **, escaped # and !, and trailing spaces', async () => {
    const root = await tree({
      '.gitignore': [
        'docs/**/*.tmp',
        '\\#notes.txt',
        '\\!bang.txt',
        'spaces.txt   ',
        'kept\\ ',
        '# a comment',
        '',
      ].join('\n'),
      'docs/a.tmp': 'x',
      'docs/x/y/b.tmp': 'x',
      'other/c.tmp': 'x',
      '#notes.txt': 'x',
      '!bang.txt': 'x',
      'spaces.txt': 'x',
      'kept ': 'x',
      '# a comment': 'x',
    });
    const result = await walk(root);
    expect(result.paths).toEqual(['other/c.tmp', '# a comment', '.gitignore']);
    expect(result.reasons).toEqual({
      '!bang.txt': 'ignored',
      '#notes.txt': 'ignored',
      'docs/a.tmp': 'ignored',
      'docs/x/y/b.tmp': 'ignored',
      'kept ': 'ignored',
      'spaces.txt': 'ignored',
    });
  });

  it('reads CRLF line endings and a UTF-8 byte order mark', async () => {
    const root = await tree({ '.gitignore': '\uFEFFa.txt\r\nb.txt\r\n', 'a.txt': 'x', 'b.txt': 'x', 'c.txt': 'x' });
    expect((await walk(root)).paths).toEqual(['.gitignore', 'c.txt']);
  });

  it('is case-sensitive, as git is by default', async () => {
    const root = await tree({ '.gitignore': '*.LOG\n', 'a.log': 'x', 'b.LOG': 'x' });
    expect((await walk(root)).paths).toEqual(['.gitignore', 'a.log']);
  });

  it('keeps the ignore files themselves unless they are ignored', async () => {
    const root = await tree({ '.gitignore': '/.gitignore\n*.tmp\n', 'sub/.gitignore': 'x\n', 'a.tmp': 'x' });
    const result = await walk(root);
    expect(result.paths).toEqual(['sub/.gitignore']);
    expect(result.reasons).toEqual({ '.gitignore': 'ignored', 'a.tmp': 'ignored' });
  });
});

describe('sync_ignore: .gittxtignore', () => {
  it('applies after the same folder’s .gitignore, so it wins', async () => {
    const root = await tree({
      '.gitignore': '*.log\n',
      '.gittxtignore': '!keep.log\n*.csv\nfixtures/\n',
      'keep.log': 'x',
      'drop.log': 'x',
      'data.csv': 'x',
      'fixtures/a.json': 'x',
      'sub/.gittxtignore': '*.py\n',
      'sub/a.py': 'x',
      'b.py': 'x',
    });
    const result = await walk(root);
    expect(result.paths).toEqual(['sub/.gittxtignore', '.gitignore', '.gittxtignore', 'b.py', 'keep.log']);
    expect(result.reasons).toEqual({
      'data.csv': 'ignored',
      'drop.log': 'ignored',
      'fixtures/': 'ignored',
      'sub/a.py': 'ignored',
    });
  });
});

describe('sync_ignore: false', () => {
  it('applies no ignore file at all', async () => {
    const root = await tree({
      '.gitignore': '*\n',
      '.gittxtignore': '*\n',
      'build/out.js': 'x',
      'sub/.gitignore': '*\n',
      'sub/a.txt': 'x',
    });
    const result = await walk(root, { options: { syncIgnore: false } });
    expect(result.paths).toEqual(['build/out.js', 'sub/.gitignore', 'sub/a.txt', '.gitignore', '.gittxtignore']);
    expect(result.skipped).toEqual([]);
  });
});

describe('ignore files that cannot be applied', () => {
  it('records an unreadable ignore file and walks on without it', async () => {
    const root = await tree({ '.gitignore': '*.log\n', 'sub/.gitignore': '*.txt\n', 'sub/a.txt': 'x', 'a.log': 'x' });
    const result = await walk(root, {
      deps: {
        readFile: (folder, name, maxBytes) =>
          folder.abs.endsWith('sub')
            ? Promise.reject(new Error('EACCES'))
            : nodeWalkFs.readFile(folder, name, maxBytes),
      },
    });
    expect(result.paths).toEqual(['sub/a.txt', '.gitignore']);
    expect(result.reasons).toEqual({ 'a.log': 'ignored', 'sub/.gitignore': 'unreadable' });
  });

  it('stops the walk at an ignore file over the per-file limit rather than scan other files than git', async () => {
    const root = await tree({ 'sub/.gitignore': `*.txt\n${'#'.repeat(200)}\n`, 'sub/a.txt': 'x' });
    await expect(walk(root, { limits: { maxFileBytes: 100 } })).rejects.toMatchObject({
      code: 'IGNORE_FILE_TOO_LARGE',
      message: expect.stringContaining('sub/.gitignore') as unknown,
    });
    // Without ignore files it is an ordinary file.
    expect((await walk(root, { limits: { maxFileBytes: 100 }, options: { syncIgnore: false } })).reasons).toEqual({
      'sub/.gitignore': 'too_large',
    });
  });

  it('applies ignore files of tens of thousands of rules, as git does', async () => {
    const rules = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag}-${i}-*.txt`).join('\n');
    const root = await tree({
      '.gitignore': `${rules(30_000, 'root')}\n*.log\n`,
      'a.log': 'x',
      'deep/.gitignore': `${rules(25_000, 'deep')}\n*.md\n`,
      'deep/a.md': 'x',
      'deep/b.log': 'x',
      'deep/root-7-x.txt': 'x',
      'deep/c.txt': 'x',
      'own/.gittxtignore': `${rules(10_000, 'own')}\n*.md\n`,
      'own/a.md': 'x',
    });
    const result = await walk(root);
    expect(result.paths).toEqual(['deep/.gitignore', 'deep/c.txt', 'own/.gittxtignore', '.gitignore']);
    expect(result.reasons).toEqual({
      'a.log': 'ignored',
      'deep/a.md': 'ignored',
      'deep/b.log': 'ignored',
      'deep/root-7-x.txt': 'ignored',
      'own/a.md': 'ignored',
    });
  });

  it.skipIf(onWindows)('does not follow a linked ignore file (git does not either)', async () => {
    const root = await tree({ 'rules.txt': '*.log\n', '.gitignore': { link: 'rules.txt' }, 'a.log': 'x' });
    const result = await walk(root);
    expect(result.paths).toEqual(['a.log', 'rules.txt']);
    expect(result.reasons).toEqual({ '.gitignore': 'symlink' });
  });
});
