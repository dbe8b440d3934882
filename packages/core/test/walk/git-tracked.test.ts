// Git's ignore rules apply to untracked files only: with the work tree's index, the walk keeps
// what `git ls-files --cached --others --exclude-standard` lists, and reposcan's own filters
// (`.gittxtignore`, patterns) still apply to every file.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gitListed, gitPaths, gitWorkTree, hasGit } from './git-fixture.js';
import { onWindows, useTempTrees, walk, type TreeSpec } from './walk-fixture.js';

const tree = useTempTrees();

describe.skipIf(!hasGit || onWindows)('tracked files in a git work tree', () => {
  let home = '';
  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), 'reposcan-git-home-'));
  });
  afterAll(async () => {
    await rm(home, { recursive: true, force: true });
  });

  /** A work tree of `spec` where `tracked` (paths of spec) are added, ignored or not. */
  async function workTree(spec: TreeSpec, tracked: string[]): Promise<string> {
    const root = await tree(spec);
    gitPaths(root, home, ['init', '-q']);
    if (tracked.length > 0) gitPaths(root, home, ['add', '-f', '--', ...tracked]);
    return root;
  }

  it('keeps a force-added file that .gitignore ignores, and ignores its untracked neighbours', async () => {
    const root = await workTree({ '.gitignore': '*.log\n', 'kept.log': 'x', 'new.log': 'x', 'a.txt': 'x' }, [
      'kept.log',
    ]);
    const result = await walk(root, { git: gitWorkTree(root, home) });
    expect(result.paths).toEqual(['.gitignore', 'a.txt', 'kept.log']);
    expect(result.reasons['new.log']).toBe('ignored');
    expect(result.paths.sort()).toEqual(gitListed(root, home));
    // Without the index (a plain folder) the rules apply to every file.
    expect((await walk(root)).paths).toEqual(['.gitignore', 'a.txt']);
  });

  it('enters a checked-in folder that a rule ignores, for its tracked files only', async () => {
    const root = await workTree(
      {
        '.gitignore': 'dist/\n',
        'dist/app.js': 'x',
        'dist/deep/chunk.js': 'x',
        'dist/stale.js': 'x',
        'dist/untracked/x.js': 'x',
        'src/a.ts': 'x',
      },
      ['dist/app.js', 'dist/deep/chunk.js', 'src/a.ts'],
    );
    const result = await walk(root, { git: gitWorkTree(root, home) });
    expect(result.paths).toEqual(['dist/deep/chunk.js', 'dist/app.js', 'src/a.ts', '.gitignore']);
    expect(result.reasons).toMatchObject({ 'dist/stale.js': 'ignored', 'dist/untracked/': 'ignored' });
    expect(result.paths.sort()).toEqual(gitListed(root, home));
  });

  it('still applies .gittxtignore and exclude patterns to tracked files', async () => {
    const root = await workTree(
      { '.gitignore': '*.log\n', '.gittxtignore': 'secret.txt\n', 'a.log': 'x', 'secret.txt': 'x', 'b.txt': 'x' },
      ['a.log', 'secret.txt', 'b.txt'],
    );
    const git = gitWorkTree(root, home);
    const result = await walk(root, { git, options: { excludePatterns: ['*.log'] } });
    expect(result.paths).toEqual(['.gitignore', '.gittxtignore', 'b.txt']);
    expect(result.reasons).toMatchObject({ 'a.log': 'pattern', 'secret.txt': 'ignored' });
  });

  it('applies no ignore file with sync_ignore off, tracked or not', async () => {
    const root = await workTree({ '.gitignore': '*.log\n', 'a.log': 'x', 'b.log': 'x' }, ['a.log']);
    const result = await walk(root, { git: gitWorkTree(root, home), options: { syncIgnore: false } });
    expect(result.paths).toEqual(['.gitignore', 'a.log', 'b.log']);
  });

  it('applies .git/info/exclude to untracked files, below every .gitignore', async () => {
    const root = await workTree(
      { 'sub/.gitignore': '!keep.tmp\n', 'a.tmp': 'x', 'sub/keep.tmp': 'x', 'sub/b.tmp': 'x', 'tracked.tmp': 'x' },
      ['tracked.tmp'],
    );
    await writeFile(join(root, '.git', 'info', 'exclude'), '*.tmp\n');
    const result = await walk(root, { git: gitWorkTree(root, home) });
    expect(result.paths).toEqual(['sub/.gitignore', 'sub/keep.tmp', 'tracked.tmp']);
    expect(result.paths.sort()).toEqual(gitListed(root, home));
  });

  it('applies the .gitignore files above a scanned subfolder, as git does', async () => {
    const root = await workTree(
      {
        '.gitignore': '*.log\n/pkg/gen/\n',
        'pkg/.gitignore': 'local.txt\n',
        'pkg/app/a.log': 'x',
        'pkg/app/local.txt': 'x',
        'pkg/app/main.ts': 'x',
        'pkg/app/forced.log': 'x',
        'pkg/gen/out.ts': 'x',
      },
      ['pkg/app/forced.log'],
    );
    const git = gitWorkTree(root, home);
    const app = await walk(root, { git, subdir: 'pkg/app' });
    expect(app.paths).toEqual(['pkg/app/forced.log', 'pkg/app/main.ts']);
    expect(app.paths).toEqual(gitListed(join(root, 'pkg', 'app'), home));
    // A subfolder git ignores is scanned for the files it tracks: here none.
    expect((await walk(root, { git, subdir: 'pkg/gen' })).paths).toEqual(gitListed(join(root, 'pkg', 'gen'), home));
  });
});
