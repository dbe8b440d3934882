import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// Builds the bare repositories the loopback server serves. Fixture-building only: the code
// under test never runs git this way.

export const FIXTURE_ENV = {
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

/** Whether this file system takes a name that is not UTF-8 (APFS and Windows refuse one). */
export const takesRawNames: boolean = (() => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'reposcan-raw-name-'));
  try {
    writeFileSync(Buffer.from(`${dir}/caf\xe9`, 'latin1'), '');
    // A file system may take the name and store another (Windows: U+FFFD).
    return readdirSync(dir, { encoding: 'buffer' })[0]?.equals(Buffer.from('caf\xe9', 'latin1')) === true;
  } catch {
    return false;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
})();

/** Latin-1 names on branch `dev` of `acme/widgets` (where the file system takes them), as the clone carries them. */
export const RAW_NAMES: readonly string[] = takesRawNames ? ['caf\udce9.txt', 'd\udce9j\udce0/inside.md'] : [];

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, env: { ...FIXTURE_ENV, HOME: cwd }, encoding: 'utf8' }).trim();
}

export interface Fixtures {
  /** GIT_PROJECT_ROOT for the server. */
  projectRoot: string;
  /** Commit of each branch of `acme/widgets`. */
  commits: Record<'trunk' | 'dev' | 'feature/x', string>;
  /** `acme/exact`: its bare repository and the commit of `main`. */
  exact: { bare: string; commit: string };
  cleanup(): void;
}

/** Targets of the links in `acme/exact`, by link path. */
export const EXACT_LINKS: Readonly<Record<string, string>> = {
  leak: '/etc/passwd',
  abs: '/abs/path/reposcan-link-target',
  up: '../..',
  loop: 'loop',
  'docs/.gitignore': '*.md', // read as rules, this would ignore docs/guide.md
};
/** Submodule (gitlink) paths in `acme/exact`. */
export const EXACT_SUBMODULES: readonly string[] = ['sub', 'docs/vendored'];

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
  if (takesRawNames) {
    writeFileSync(Buffer.from(path.join(work, 'caf\xe9.txt'), 'latin1'), 'latin-1 name\n');
    mkdirSync(Buffer.from(path.join(work, 'd\xe9j\xe0'), 'latin1'));
    writeFileSync(Buffer.from(path.join(work, 'd\xe9j\xe0', 'inside.md'), 'latin1'), '# inside\n');
  }
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

  const exact = createExact(base, projectRoot);
  createCheckedIn(base, projectRoot);

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
    exact,
    cleanup: () => rmSync(base, { recursive: true, force: true }),
  };
}

/**
 * `acme/exact.git`, default branch `main`: files whose checkout git would change (a
 * `.gitattributes` asking for CRLF on every text file, `ident`, a `filter=` with no driver, a
 * UTF-16LE working-tree encoding), files committed with CRLF as they are, the links of
 * EXACT_LINKS and the gitlinks of EXACT_SUBMODULES.
 */
function createExact(base: string, projectRoot: string): { bare: string; commit: string } {
  const work = path.join(base, 'exact-work');
  mkdirSync(work);
  git(work, 'init', '-q', '-b', 'main');
  write(work, 'README.md', '# exact\nLF only\n');
  write(work, 'notes.txt', 'line one\nline 2\n');
  write(work, 'windows.txt', 'committed\r\nwith CRLF\r\n');
  write(work, 'mixed.md', 'crlf\r\nlf\nno newline');
  write(work, 'src/id.ts', '// $Id$\nexport const id = 1;\n');
  write(work, 'settings.ini', '[secret]\nvalue = 42\n');
  write(work, 'wide.txt', 'héllo wörld\n');
  write(work, 'docs/guide.md', '# guide\n');
  for (const [link, target] of Object.entries(EXACT_LINKS)) symlinkSync(target, path.join(work, link));
  git(work, 'add', '-A');
  for (const [i, sub] of EXACT_SUBMODULES.entries())
    git(work, 'update-index', '--add', '--cacheinfo', `160000,${String(i + 1).repeat(40)},${sub}`);
  // Added last, so the files above went in as written.
  write(
    work,
    '.gitattributes',
    '* text eol=crlf\n*.txt eol=crlf\n*.ts ident\nsettings.ini filter=secret\nwide.txt working-tree-encoding=UTF-16LE\n',
  );
  git(work, 'add', '.gitattributes');
  git(work, 'commit', '-q', '-m', 'exact');
  const bare = path.join(projectRoot, 'acme', 'exact.git');
  git(base, 'clone', '-q', '--bare', work, bare);
  serveWithFilters(bare);
  return { bare, commit: git(bare, 'rev-parse', 'main') };
}

/**
 * `acme/checked-in.git`, default branch `main`: files the repository's own `.gitignore` ignores
 * but that were committed anyway (`git add -f`): a built `dist/` and a log.
 */
function createCheckedIn(base: string, projectRoot: string): void {
  const work = path.join(base, 'checked-in-work');
  mkdirSync(work);
  git(work, 'init', '-q', '-b', 'main');
  write(work, '.gitignore', 'dist/\n*.log\n');
  write(work, 'src/main.ts', 'export {};\n');
  write(work, 'dist/app.js', 'console.log(1);\n');
  write(work, 'dist/min/app.min.js', 'console.log(1)\n');
  write(work, 'notes/debug.log', 'kept on purpose\n');
  git(work, 'add', '-f', '.');
  git(work, 'commit', '-q', '-m', 'checked in');
  const bare = path.join(projectRoot, 'acme', 'checked-in.git');
  git(base, 'clone', '-q', '--bare', work, bare);
  serveWithFilters(bare);
}

/** Every regular file of `commit` (mode 100644/100755) with its blob's bytes, as `git cat-file` gives them. */
export function commitFiles(bare: string, commit: string): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  for (const record of git(bare, 'ls-tree', '-r', '-z', '--full-tree', commit).split('\0')) {
    const match = /^(100644|100755) blob [0-9a-f]+\t(.+)$/s.exec(record);
    if (!match) continue;
    const file = match[2] as string;
    files.set(
      file,
      execFileSync('git', ['cat-file', 'blob', `${commit}:${file}`], {
        cwd: bare,
        env: { ...FIXTURE_ENV, HOME: bare },
      }),
    );
  }
  return files;
}

/** As GitHub does: partial clone (`--filter`) and fetching missing blobs by id. */
export function serveWithFilters(bareRepo: string): void {
  git(bareRepo, 'config', 'uploadpack.allowFilter', 'true');
  git(bareRepo, 'config', 'uploadpack.allowAnySHA1InWant', 'true');
}

function write(root: string, relPath: string, content: string): void {
  const file = path.join(root, relPath);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, content);
}
