import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readGitHead } from '../../src/local/index.js';
import { PROVES_PATHS } from '@reposcan/core/proven-path';

let base = '';
let counter = 0;

beforeAll(async () => {
  base = await mkdtemp(path.join(os.tmpdir(), 'reposcan-head-test-'));
});

afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

/** A folder whose `.git/HEAD` holds `head` (a string), or nothing when `head` is null. */
async function repoWithHead(head: string | null): Promise<string> {
  const repo = path.join(base, `repo-${++counter}`);
  await mkdir(path.join(repo, '.git'), { recursive: true });
  if (head !== null) await writeFile(path.join(repo, '.git', 'HEAD'), head);
  return repo;
}

describe('readGitHead', () => {
  it.each([
    ['ref: refs/heads/main\n', 'main'],
    ['ref: refs/heads/feature/login-form\n', 'feature/login-form'],
    ['ref: refs/heads/release-1.2\r\n', 'release-1.2'],
    ['ref: refs/heads/ünïcode', 'ünïcode'],
  ])('reads the branch from %j', async (head, branch) => {
    expect(await readGitHead(await repoWithHead(head))).toBe(branch);
  });

  it.each([
    ['a detached SHA-1', 'e83c5163316f89bfbde7d9ab23ca2e25604af290\n'],
    ['a detached SHA-256', `${'ab'.repeat(32)}\n`],
    ['a ref outside refs/heads', 'ref: refs/tags/v1\n'],
    ['an empty file', ''],
    ['garbage', 'hello world\n'],
    ['a name with "..", git would refuse it', 'ref: refs/heads/a..b\n'],
    ['a name with a control character', 'ref: refs/heads/a\u001bb\n'],
    ['two lines', 'ref: refs/heads/main\nref: refs/heads/other\n'],
    ['an oversized file', `ref: refs/heads/main\n${' '.repeat(10_000)}`],
  ])('returns null for %s', async (_label, head) => {
    expect(await readGitHead(await repoWithHead(head))).toBeNull();
  });

  it('returns null without a .git folder, or without HEAD', async () => {
    const plain = path.join(base, 'plain');
    await mkdir(plain);
    expect(await readGitHead(plain)).toBeNull();
    expect(await readGitHead(await repoWithHead(null))).toBeNull();
    expect(await readGitHead(path.join(base, 'does-not-exist'))).toBeNull();
  });

  it('does not follow a symlinked HEAD', async () => {
    const target = path.join(base, 'outside-head');
    await writeFile(target, 'ref: refs/heads/leaked\n');
    const repo = await repoWithHead(null);
    await symlink(target, path.join(repo, '.git', 'HEAD'));
    expect(await readGitHead(repo)).toBeNull();
  });

  it('does not follow a symlinked .git folder or a .git file (worktree, submodule)', async () => {
    const elsewhere = await repoWithHead('ref: refs/heads/leaked\n');
    const linked = path.join(base, 'linked');
    await mkdir(linked);
    await symlink(path.join(elsewhere, '.git'), path.join(linked, '.git'));
    expect(await readGitHead(linked)).toBeNull();

    const worktree = path.join(base, 'worktree');
    await mkdir(worktree);
    await writeFile(path.join(worktree, '.git'), `gitdir: ${path.join(elsewhere, '.git')}\n`);
    expect(await readGitHead(worktree)).toBeNull();
  });

  it.skipIf(!PROVES_PATHS)(
    'reads no HEAD that is not at <root>/.git/HEAD once open (a folder on the way is a link)',
    async () => {
      const elsewhere = await repoWithHead('ref: refs/heads/leaked\n');
      const via = path.join(base, 'via');
      await symlink(path.dirname(elsewhere), via);
      // `.git` is a real folder as lstat sees it from here, but the open lands where the link leads.
      expect(await readGitHead(path.join(via, path.basename(elsewhere)))).toBeNull();
      expect(await readGitHead(elsewhere)).toBe('leaked');
    },
  );

  it('returns null, without hanging, when HEAD is a FIFO or a folder', async () => {
    const fifo = await repoWithHead(null);
    execFileSync('mkfifo', [path.join(fifo, '.git', 'HEAD')]);
    expect(await readGitHead(fifo)).toBeNull();

    const folder = await repoWithHead(null);
    await mkdir(path.join(folder, '.git', 'HEAD'));
    expect(await readGitHead(folder)).toBeNull();
  });
});
