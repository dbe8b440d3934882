import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { benchGitEnv } from '../lib/corpora.js';
import { commitEveryFileChange, commitOneFileChange, copyServedRepo } from '../lib/served-repo.js';

const git = (gitDir: string, ...args: string[]): string =>
  execFileSync('git', ['--git-dir', gitDir, ...args], { env: benchGitEnv('2025-01-01T00:00:00Z'), encoding: 'utf8' });

describe('a served copy that gains commits', () => {
  let base: string;
  let pinned: string;
  let pinnedHead: string;

  beforeAll(() => {
    base = mkdtempSync(join(tmpdir(), 'reposcan-bench-one-file-commit-'));
    const tree = join(base, 'tree');
    mkdirSync(join(tree, 'pkg'), { recursive: true });
    writeFileSync(join(tree, 'pkg', 'README.md'), '# pkg\n\nNo newline at the end');
    writeFileSync(join(tree, 'index.js'), 'module.exports = 1;\n');
    symlinkSync('index.js', join(tree, 'main.js'));
    pinned = join(base, 'pinned.git');
    execFileSync('git', ['init', '-q', '--bare', '--initial-branch=main', pinned]);
    git(pinned, '--work-tree', tree, 'add', '-A');
    git(pinned, '--work-tree', tree, 'commit', '-q', '-m', 'corpus');
    pinnedHead = git(pinned, 'rev-parse', 'main').trim();
  });
  afterAll(() => rmSync(base, { recursive: true, force: true }));

  it('changes exactly that file, by the line, leaves the pinned repository alone, and lets the server answer filters', async () => {
    const copy = join(base, 'copy.git');
    await copyServedRepo(pinned, copy);
    const { base: first, head } = await commitOneFileChange(copy, 'main', 'pkg/README.md', 'One line more.');

    expect(first).toBe(pinnedHead);
    expect(git(copy, 'rev-parse', 'main').trim()).toBe(head);
    expect(git(copy, 'rev-parse', `${head}^`).trim()).toBe(first);
    expect(git(copy, 'diff', '--name-status', first, head)).toBe('M\tpkg/README.md\n');
    expect(git(copy, 'show', `${head}:pkg/README.md`)).toBe('# pkg\n\nNo newline at the end\nOne line more.\n');
    expect(git(copy, 'config', 'uploadpack.allowFilter').trim()).toBe('true');

    expect(git(pinned, 'rev-parse', 'main').trim()).toBe(pinnedHead);
    expect(() => git(pinned, 'cat-file', '-e', head)).toThrow();
  });

  it('appends the line to every file of the branch, links left as they are', async () => {
    const copy = join(base, 'every.git');
    await copyServedRepo(pinned, copy);
    const { base: first, head } = await commitEveryFileChange(copy, 'main', 'One line more.');

    expect(first).toBe(pinnedHead);
    expect(git(copy, 'rev-parse', 'main').trim()).toBe(head);
    expect(git(copy, 'diff', '--name-status', first, head)).toBe('M\tindex.js\nM\tpkg/README.md\n');
    expect(git(copy, 'show', `${head}:pkg/README.md`)).toBe('# pkg\n\nNo newline at the end\nOne line more.\n');
    expect(git(copy, 'show', `${head}:index.js`)).toBe('module.exports = 1;\nOne line more.\n');
    expect(git(pinned, 'rev-parse', 'main').trim()).toBe(pinnedHead);
  });

  it('makes the same commit every time (fixed identity and dates)', async () => {
    const heads: string[] = [];
    for (const name of ['again-1.git', 'again-2.git']) {
      const copy = join(base, name);
      await copyServedRepo(pinned, copy);
      heads.push((await commitOneFileChange(copy, 'main', 'index.js', '// changed')).head);
    }
    expect(heads[0]).toMatch(/^[0-9a-f]{40}$/);
    expect(heads[1]).toBe(heads[0]);
  });

  it('refuses a path that is not a file of the branch', async () => {
    const copy = join(base, 'missing.git');
    await copyServedRepo(pinned, copy);
    await expect(commitOneFileChange(copy, 'main', 'pkg', 'x')).rejects.toThrow('pkg is not a file in main');
    await expect(commitOneFileChange(copy, 'main', 'nowhere.md', 'x')).rejects.toThrow('is not a file');
    expect(git(copy, 'rev-parse', 'main').trim()).toBe(pinnedHead);
  });
});
