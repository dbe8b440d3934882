import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FIXTURE_ENV } from './fixture-repos.js';

// `acme/changes.git` for change digests: tag `v1` (the base) and branch `main` two commits later,
// with one of each kind of change. Dates and names are fixed, so commit ids are the same on every
// run and golden files can name them.

const ENV = {
  ...FIXTURE_ENV,
  GIT_AUTHOR_DATE: '2026-01-01T00:00:00Z',
  GIT_COMMITTER_DATE: '2026-01-01T00:00:00Z',
};

/** A GitHub token's shape (split, so this file itself holds none): secretlint's `github` rule finds it. */
export const FAKE_GITHUB_TOKEN = ['gh', 'p_', 'wWPw5k4aXcaT4fNP0Uc', 'nZwJUVFk6LO0pINUx'].join('');

export interface ChangeFixture {
  /** GIT_PROJECT_ROOT for the server. */
  projectRoot: string;
  base: string;
  head: string;
  cleanup(): void;
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, env: { ...ENV, HOME: cwd }, encoding: 'utf8' }).trim();
}

function write(root: string, rel: string, content: string | Buffer): void {
  mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
  writeFileSync(path.join(root, rel), content);
}

const LONG_TEXT = Array.from({ length: 30 }, (_, i) => `line ${i + 1} of a file that moves\n`).join('');

export function createChangeFixture(): ChangeFixture {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'reposcan-change-fixture-'));
  const work = path.join(dir, 'work');
  mkdirSync(work);
  git(work, 'init', '-q', '-b', 'main');
  write(work, 'README.md', '# Changes\n\nThe first version.\n');
  write(work, 'src/app.ts', 'export const app = 1;\nexport const name = "app";\n');
  write(work, 'src/old-name.ts', LONG_TEXT);
  write(work, 'config/secrets.env', `TOKEN=${FAKE_GITHUB_TOKEN}\n`);
  write(work, 'docs/gone.md', '# Gone\n\nThis page goes away.\n');
  write(work, 'assets/logo.bin', Buffer.from([0, 1, 2, 3, 0, 255, 0, 7]));
  write(work, 'untouched.txt', 'never changes\n');
  git(work, 'add', '-A');
  git(work, 'commit', '-q', '-m', 'base');
  git(work, 'tag', 'v1');
  const base = git(work, 'rev-parse', 'HEAD');

  write(work, 'src/app.ts', 'export const app = 2;\nexport const name = "app";\nexport const added = true;\n');
  git(work, 'mv', 'src/old-name.ts', 'src/new-name.ts');
  write(work, 'src/new-name.ts', LONG_TEXT.replace('line 30 of', 'line thirty of'));
  git(work, 'rm', '-q', 'config/secrets.env', 'docs/gone.md');
  write(work, 'assets/logo.bin', Buffer.from([0, 1, 2, 3, 0, 254, 0, 7, 9]));
  git(work, 'add', '-A');
  git(work, 'commit', '-q', '-m', 'middle');
  write(work, 'src/added.ts', `// new in main\nexport const key = "${FAKE_GITHUB_TOKEN}";\n`);
  write(work, 'docs/new.md', '# New\n\nA new page.\n');
  git(work, 'add', '-A');
  git(work, 'commit', '-q', '-m', 'head');
  const head = git(work, 'rev-parse', 'HEAD');

  const projectRoot = path.join(dir, 'served');
  mkdirSync(path.join(projectRoot, 'acme'), { recursive: true });
  const bare = path.join(projectRoot, 'acme', 'changes.git');
  git(dir, 'clone', '-q', '--bare', work, bare);
  serveAsAHost(bare);
  return { projectRoot, base, head, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * `acme/ignores.git` beside the change fixture: `src/.gittxtignore` leaves out `*.gen.ts`, and the
 * commit after `base` changes `src/app.ts` and adds `src/types.gen.ts` and `notes/todo.md`.
 */
export function addIgnoreFixture(projectRoot: string): { base: string; head: string } {
  return addTwoCommitRepo(
    projectRoot,
    'ignores',
    {
      'src/.gittxtignore': '*.gen.ts\n',
      'src/app.ts': 'export const app = 1;\n',
      'README.md': '# Ignores\n',
    },
    {
      'src/app.ts': 'export const app = 2;\n',
      'src/types.gen.ts': 'export type Generated = string;\n',
      'notes/todo.md': '# To do\n',
    },
  );
}

/** `acme/<name>.git` in `projectRoot`: a commit `base` of the files `first`, then `head`, writing `then` over it. */
function addTwoCommitRepo(
  projectRoot: string,
  name: string,
  first: Record<string, string | Buffer>,
  then: Record<string, string | Buffer>,
): { base: string; head: string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), `reposcan-${name}-fixture-`));
  try {
    git(dir, 'init', '-q', '-b', 'main');
    const commit = (files: Record<string, string | Buffer>, message: string): string => {
      for (const [rel, content] of Object.entries(files)) write(dir, rel, content);
      git(dir, 'add', '-A');
      git(dir, 'commit', '-q', '-m', message);
      return git(dir, 'rev-parse', 'HEAD');
    };
    const base = commit(first, 'base');
    const head = commit(then, 'head');
    const bare = path.join(projectRoot, 'acme', `${name}.git`);
    git(projectRoot, 'clone', '-q', '--bare', dir, bare);
    serveAsAHost(bare);
    return { base, head };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Lines of `big.txt` in `acme/large-change.git`: its patch alone is larger than a read of git's diff output (4 MiB). */
export const BIG_FILE_LINES = Array.from(
  { length: 90_000 },
  (_, i) => `line ${i} of a file too large to read at once\n`,
);

/**
 * `acme/large-change.git` beside the change fixture: the commit after `base` adds `big.txt`
 * (BIG_FILE_LINES), `legacy.txt` in Latin-1 (`café`, not UTF-8), `bom.txt` (UTF-8 with a byte
 * order mark) and two small files after them.
 */
export function addLargeChangeFixture(projectRoot: string): { base: string; head: string } {
  return addTwoCommitRepo(
    projectRoot,
    'large-change',
    { 'README.md': '# Large change\n' },
    {
      'big.txt': BIG_FILE_LINES.join(''),
      'legacy.txt': Buffer.from('caf\xe9 au lait\n', 'latin1'),
      'bom.txt': '\ufeffmarked\n',
      'zz/after-1.ts': 'export const after = 1;\n',
      'zz/after-2.ts': 'export const after = 2;\n',
    },
  );
}

/**
 * As a git host serves: filters (so a clone is partial and the diff fetches the blobs it needs), and
 * a commit id fetched when a ref reaches it.
 */
function serveAsAHost(bare: string): void {
  git(bare, 'config', 'uploadpack.allowFilter', 'true');
  git(bare, 'config', 'uploadpack.allowReachableSHA1InWant', 'true');
}
