import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// Builds the bare repositories the loopback server serves. Fixture-building only: the code
// under test never runs git this way.

const FIXTURE_ENV = {
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_AUTHOR_NAME: 'Fixture',
  GIT_AUTHOR_EMAIL: 'fixture@example.test',
  GIT_COMMITTER_NAME: 'Fixture',
  GIT_COMMITTER_EMAIL: 'fixture@example.test',
  LC_ALL: 'C',
};

export const LFS_POINTER =
  'version https://git-lfs.github.com/spec/v1\n' +
  'oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n' +
  'size 12345\n';

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, env: { ...FIXTURE_ENV, HOME: cwd }, encoding: 'utf8' }).trim();
}

export interface Fixtures {
  /** GIT_PROJECT_ROOT for the server. */
  projectRoot: string;
  /** Commit of each branch of `acme/widgets`. */
  commits: Record<'trunk' | 'dev' | 'feature/x', string>;
  cleanup(): void;
}

/**
 * `acme/widgets.git`: default branch `trunk` (a symlink `leak -> /etc/passwd`, a submodule at
 * `vendor/lib` pointing at `file:///etc`, an LFS pointer `model.bin`), branch `dev`, branch
 * `feature/x` (with `docs/guide/a.md`), and a tag `feature` so `/tree/feature/x/…` needs the
 * longest match. `acme/big.git`: one 2 MB random blob.
 */
export function createFixtures(): Fixtures {
  const base = mkdtempSync(path.join(os.tmpdir(), 'reposcan-remote-fixtures-'));
  const projectRoot = path.join(base, 'served');
  mkdirSync(path.join(projectRoot, 'acme'), { recursive: true });

  const work = path.join(base, 'work');
  mkdirSync(work);
  git(work, 'init', '-q', '-b', 'trunk');
  write(work, 'README.md', '# widgets\n');
  write(work, 'src/app.ts', 'export const app = 1;\n');
  write(work, '.gitattributes', '*.bin filter=lfs diff=lfs merge=lfs -text\n');
  write(work, 'model.bin', LFS_POINTER);
  write(work, '.gitmodules', '[submodule "lib"]\n\tpath = vendor/lib\n\turl = file:///etc\n');
  symlinkSync('/etc/passwd', path.join(work, 'leak'));
  git(work, 'add', '-A');
  git(work, 'update-index', '--add', '--cacheinfo', `160000,${'1'.repeat(40)},vendor/lib`);
  git(work, 'commit', '-q', '-m', 'trunk');
  const trunk = git(work, 'rev-parse', 'HEAD');
  git(work, 'tag', 'feature');

  git(work, 'checkout', '-q', '-b', 'dev');
  write(work, 'DEV.md', 'dev branch\n');
  git(work, 'add', '-A');
  git(work, 'commit', '-q', '-m', 'dev');
  const dev = git(work, 'rev-parse', 'HEAD');

  git(work, 'checkout', '-q', '-b', 'feature/x', 'trunk');
  write(work, 'docs/guide/a.md', '# guide\n');
  write(work, 'docs/other/b.md', '# other\n');
  write(work, 'packages/app/index.ts', 'export {};\n');
  git(work, 'add', '-A');
  git(work, 'commit', '-q', '-m', 'feature');
  const featureX = git(work, 'rev-parse', 'HEAD');

  const widgets = path.join(projectRoot, 'acme', 'widgets.git');
  git(base, 'clone', '-q', '--bare', work, widgets);
  git(widgets, 'symbolic-ref', 'HEAD', 'refs/heads/trunk');
  serveWithFilters(widgets);

  const bigWork = path.join(base, 'big-work');
  mkdirSync(bigWork);
  git(bigWork, 'init', '-q', '-b', 'main');
  writeFileSync(path.join(bigWork, 'blob.dat'), randomBytes(2 * 1024 * 1024));
  git(bigWork, 'add', '-A');
  git(bigWork, 'commit', '-q', '-m', 'big');
  const big = path.join(projectRoot, 'acme', 'big.git');
  git(base, 'clone', '-q', '--bare', bigWork, big);
  serveWithFilters(big);

  return {
    projectRoot,
    commits: { trunk, dev, 'feature/x': featureX },
    cleanup: () => rmSync(base, { recursive: true, force: true }),
  };
}

/** As GitHub does: partial clone (`--filter`) and fetching missing blobs by id. */
function serveWithFilters(bareRepo: string): void {
  git(bareRepo, 'config', 'uploadpack.allowFilter', 'true');
  git(bareRepo, 'config', 'uploadpack.allowAnySHA1InWant', 'true');
}

function write(root: string, relPath: string, content: string): void {
  const file = path.join(root, relPath);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, content);
}
