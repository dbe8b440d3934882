// The walk against git on random trees: random names (non-ASCII ones too), random `.gitignore`
// files at several levels with random rules, and random include/exclude lists. The kept files
// must be exactly those `git ls-files --others --exclude-standard` lists. A run tries
// FUZZ_TREES trees (300 unless set) from FUZZ_SEED (random unless set); a failure gives its
// FUZZ_SEED and tree.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mulberry32 } from '../tokens/seeded-random.js';
import { spawnSync } from 'node:child_process';
import { carriedPath, decodePathBytes, fsPath, pathBytesOf, shownPath } from '../../src/path-bytes.js';
import { gitListed, gitPaths, gitUntracked, gitWorkTree, hasGit } from './git-fixture.js';
import { onWindows, takesRawNames, walk } from './walk-fixture.js';

const TREES = Number(process.env.FUZZ_TREES ?? 300);
const SEED = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
/** Trees per git repository: each in its own folder, so one `git ls-files` answers for all. */
const BATCH = 100;

/** Long runs (FUZZ_TREES=5000) need more than the default test timeout. */
const TIMEOUT = Math.max(60_000, TREES * 250);

/** Writes a batch of trees (files only) into a fresh folder, runs `check` on it and removes it. */
async function withBatch(spec: Record<string, string>, check: (root: string) => Promise<void>): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'reposcan-fuzz-'));
  try {
    // Blocking calls: thousands of small files are written several times faster than with promises.
    for (const [path, content] of Object.entries(spec)) {
      mkdirSync(fsPath(dirname(join(root, path))), { recursive: true });
      writeFileSync(fsPath(join(root, path)), pathBytesOf(content));
    }
    await check(root);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

// Names that patterns below can hit: escapes, spaces, brackets, stars, multi-byte UTF-8, and
// (where the file system takes them) Latin-1 bytes that are not UTF-8, carried as path-bytes.ts says.
const NAMES = [
  ...(takesRawNames ? ['caf\udce9', 'd\udce9j\udce0', 'na\udcefve'] : []),
  'a',
  'b',
  'ab',
  'ba',
  'a.txt',
  'b.log',
  'x.js',
  'café',
  'cafe',
  'é',
  'A',
  'AB',
  '[x]',
  'x',
  'a b',
  'b ',
  '#c',
  '!d',
  'a\\b',
  'a*',
  '?q',
  '日本',
  'naïve',
  'build',
  'doc',
  'out.o',
  'ça',
  'a.b.c',
];

// Pieces of a path pattern: names from the tree, globs of each kind, escapes.
const SEGMENTS = [
  ...NAMES.filter((name) => !/[\\*?[#! ]/.test(name)),
  '*',
  '*',
  '?',
  '**',
  '**',
  'a*',
  '*b',
  '*.txt',
  '*.log',
  '*.*',
  'caf?',
  'caf??',
  'caf[!e]*',
  '[ab]',
  '[!a]*',
  '[[:alpha:]]*',
  '[a-c]?',
  '\\#c',
  '\\!d',
  'b\\ ',
  'a\\\\b',
  '\\[x\\]',
  '[[]x]',
  'a\\*',
  '\\?q',
  '?*',
  '*é',
  'a**',
  'b**',
  'ca**',
  '**b',
  'ç*',
  '[[:upper:]]*',
  '[^a]',
  '*[[:space:]]*',
  'na?ve',
  'na??ve',
  '日*',
  '[日]*',
];

type Random = () => number;

function pick<T>(random: Random, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)] as T;
}

function randomRule(random: Random): string {
  const r = random();
  if (r < 0.05) return '# a comment';
  if (r < 0.08) return '';
  if (r < 0.1) return '   ';
  let rule = random() < 0.25 ? '!' : '';
  if (random() < 0.25) rule += '/';
  const segments = 1 + Math.floor(random() * 3);
  rule += Array.from({ length: segments }, () => pick(random, SEGMENTS)).join('/');
  if (random() < 0.25) rule += '/';
  if (random() < 0.1) rule += '  ';
  return rule;
}

function randomRules(random: Random): string {
  return Array.from({ length: 1 + Math.floor(random() * 6) }, () => randomRule(random)).join('\n');
}

/** A random tree of files (content irrelevant) under `prefix`, with ignore files when `ignoreFiles`. */
function randomTree(
  random: Random,
  prefix: string,
  depth: number,
  ignoreFiles: boolean,
  spec: Record<string, string>,
): void {
  const names = new Set<string>();
  for (let n = 1 + Math.floor(random() * 5); n > 0; n -= 1) names.add(pick(random, NAMES));
  for (const name of names) {
    if (depth < 3 && random() < 0.4) randomTree(random, `${prefix}${name}/`, depth + 1, ignoreFiles, spec);
    else spec[`${prefix}${name}`] = 'x';
  }
  if (ignoreFiles && random() < (depth === 0 ? 0.9 : 0.4)) spec[`${prefix}.gitignore`] = randomRules(random);
}

/** Paths of `paths` under `folder/`, relative to it. */
function under(paths: readonly string[], folder: string): string[] {
  return paths
    .filter((path) => path.startsWith(`${folder}/`))
    .map((path) => path.slice(folder.length + 1))
    .sort();
}

function describeTree(spec: Record<string, string>, folder: string): string {
  return Object.entries(spec)
    .filter(([path]) => path.startsWith(`${folder}/`) && path.endsWith('.gitignore'))
    .map(([path, rules]) => `${path}:\n${String(rules)}`)
    .join('\n');
}

/** Folders of the paths (with their ancestors), under `prefix`. */
function foldersOf(paths: readonly string[], prefix: string): string[] {
  const folders = new Set<string>();
  for (const path of paths) {
    if (!path.startsWith(prefix)) continue;
    for (let slash = path.lastIndexOf('/'); slash > prefix.length; slash = path.lastIndexOf('/', slash - 1))
      folders.add(path.slice(0, slash));
  }
  return [...folders].sort();
}

/** The paths among `paths` (carried) that `git check-ignore` says its ignore files ignore (tracked paths never are). */
function gitCheckIgnore(root: string, home: string, paths: readonly string[]): string[] {
  if (paths.length === 0) return [];
  const run = spawnSync('git', ['-c', 'core.excludesFile=/dev/null', 'check-ignore', '-z', '--stdin'], {
    cwd: root,
    input: pathBytesOf(paths.join('\0')),
    env: { PATH: process.env.PATH, HOME: home, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
  });
  if (run.status !== 0 && run.status !== 1) throw new Error(`git check-ignore failed: ${run.stderr.toString()}`);
  return decodePathBytes(run.stdout)
    .split('\0')
    .filter((path) => path !== '')
    .sort();
}

// Names hold `*`, `?` and backslashes, which Windows does not allow.
describe.skipIf(!hasGit || onWindows)(`the walk against git on random trees (seed ${SEED}, ${TREES} trees)`, () => {
  let home = '';
  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), 'reposcan-git-home-'));
  });
  afterAll(async () => {
    await rm(home, { recursive: true, force: true });
  });

  it(
    'keeps exactly the files git keeps, with .gitignore files at several levels',
    async () => {
      for (let first = 0; first < TREES; first += BATCH) {
        const count = Math.min(BATCH, TREES - first);
        const spec: Record<string, string> = {};
        for (let i = first; i < first + count; i += 1) randomTree(mulberry32(SEED + i), `t${i}/`, 0, true, spec);
        await withBatch(spec, async (root) => {
          gitPaths(root, home, ['init', '-q']);
          const gitKept = gitUntracked(root, home, false);
          const result = await walk(root, { options: { syncIgnore: true } });
          expect(result.skipped.filter(({ reason }) => reason !== 'ignored')).toEqual([
            { path: '.git/', reason: 'excluded_dir' },
          ]);
          for (let i = first; i < first + count; i += 1) {
            const expected = under(gitKept, `t${i}`);
            const actual = under(result.paths, `t${i}`);
            if (actual.join('\0') !== expected.join('\0')) {
              expect(
                actual,
                `FUZZ_SEED=${SEED} tree ${i} (FUZZ_SEED=${SEED + i} FUZZ_TREES=1 alone)\n${describeTree(spec, `t${i}`)}`,
              ).toEqual(expected);
            }
          }
        });
      }
    },
    TIMEOUT,
  );

  it(
    'include and exclude patterns keep what git keeps with them as a root .gitignore',
    async () => {
      // Each tree twice: `inc/` with the include list as its .gitignore (git's ignored files are
      // the included ones), `exc/` with the exclude list (git's kept files are the ones left).
      for (let first = 0; first < TREES; first += BATCH) {
        const count = Math.min(BATCH, TREES - first);
        const spec: Record<string, string> = {};
        const lists: { include: string[]; exclude: string[] }[] = [];
        for (let i = first; i < first + count; i += 1) {
          const random = mulberry32(SEED + i);
          const files: Record<string, string> = {};
          randomTree(random, '', 0, false, files);
          const include = randomRules(random);
          const exclude = randomRules(random);
          lists.push({ include: include.split('\n'), exclude: exclude.split('\n') });
          for (const path of Object.keys(files)) {
            spec[`inc/t${i}/${path}`] = 'x';
            spec[`exc/t${i}/${path}`] = 'x';
          }
          spec[`inc/t${i}/.gitignore`] = include;
          spec[`exc/t${i}/.gitignore`] = exclude;
        }
        await withBatch(spec, async (root) => {
          gitPaths(root, home, ['init', '-q']);
          const included = gitUntracked(join(root, 'inc'), home, true);
          const left = gitUntracked(join(root, 'exc'), home, false);
          const checks = lists.map(async ({ include, exclude }, n) => {
            const i = first + n;
            const context = `FUZZ_SEED=${SEED} tree ${i}: include ${JSON.stringify(include)} exclude ${JSON.stringify(exclude)}`;
            const withInclude = under(included, `t${i}`);
            const withExclude = under(left, `t${i}`);
            const options = { syncIgnore: false };
            const dir = join(root, 'inc', `t${i}`);
            const [inc, exc, both] = await Promise.all([
              walk(dir, { options: { ...options, includePatterns: include } }),
              walk(dir, { options: { ...options, excludePatterns: exclude } }),
              walk(dir, { options: { ...options, includePatterns: include, excludePatterns: exclude } }),
            ]);
            expect(inc.paths.sort(), context).toEqual(withInclude);
            expect(exc.paths.sort(), context).toEqual(withExclude);
            expect(both.paths.sort(), context).toEqual(withInclude.filter((path) => withExclude.includes(path)));
          });
          await Promise.all(checks);
        });
      }
    },
    TIMEOUT,
  );

  it(
    'in a work tree keeps the tracked files and what git keeps of the rest, also in a subfolder; a clone keeps its commit',
    async () => {
      for (let first = 0; first < TREES; first += BATCH) {
        const count = Math.min(BATCH, TREES - first);
        const spec: Record<string, string> = {};
        for (let i = first; i < first + count; i += 1)
          randomTree(mulberry32(SEED + i + 0x5eed), `t${i}/`, 0, true, spec);
        const random = mulberry32(SEED + first);
        // Some files, ignored ones among them, are tracked; the rest are matched against the rules.
        const tracked = Object.keys(spec).filter(() => random() < 0.3);
        const exclude = `${randomRules(random)}\n${pick(random, SEGMENTS)}\n`;
        await withBatch(spec, async (root) => {
          gitPaths(root, home, ['init', '-q']);
          writeFileSync(join(root, '.git', 'info', 'exclude'), pathBytesOf(exclude));
          const list = join(home, 'tracked');
          writeFileSync(list, pathBytesOf(tracked.join('\0')));
          gitPaths(root, home, ['add', '-f', `--pathspec-from-file=${list}`, '--pathspec-file-nul']);
          const git = gitWorkTree(root, home);
          const listed = gitListed(root, home);
          const context = (i: number) =>
            `FUZZ_SEED=${SEED} tree ${i}; info/exclude ${JSON.stringify(exclude)}; tracked ${JSON.stringify(
              git.tracked.filter((path) => path.startsWith(`t${i}/`)),
            )}\n${describeTree(spec, `t${i}`)}`;

          const result = await walk(root, { git });
          for (let i = first; i < first + count; i += 1)
            expect(under(result.paths, `t${i}`), context(i)).toEqual(under(listed, `t${i}`));
          // What the walk calls ignored, git's check-ignore calls ignored too, and nothing tracked.
          // check-ignore reads its paths as pathspecs, which no escape makes literal: paths with
          // glob characters are left out of this check.
          const ignored = result.skipped
            .filter(({ reason, path }) => reason === 'ignored' && !/[*?[\\]/.test(path))
            .map(({ path }) => carriedPath(path.replace(/\/$/, '')));
          expect(gitCheckIgnore(root, home, ignored)).toEqual([...ignored].sort());

          // A subfolder of each tree, scanned alone: the .gitignore files above it still apply.
          for (let i = first; i < first + count; i += 1) {
            const folders = foldersOf(Object.keys(spec), `t${i}/`);
            if (folders.length === 0) continue;
            const subdir = pick(random, folders);
            const sub = await walk(root, { git, subdir });
            expect(sub.paths.sort(), `subdir ${subdir}: ${context(i)}`).toEqual(
              listed.filter((path) => path.startsWith(`${shownPath(subdir)}/`)),
            );
          }

          // A clone of the commit holds its tree, and the walk keeps all of it.
          gitPaths(root, home, ['commit', '-q', '--allow-empty', '-m', 'fuzz']);
          const clone = join(root, '.git', 'fuzz-clone');
          gitPaths(root, home, ['clone', '-q', '--no-hardlinks', root, clone]);
          const commitTree = gitPaths(clone, home, ['ls-tree', '-r', '-z', '--name-only', '--full-tree', 'HEAD']);
          const cloned = await walk(clone, { git: { tracked: commitTree, infoExclude: null } });
          expect(cloned.paths.sort()).toEqual(commitTree.map(shownPath).sort());
          expect(readFileSync(join(root, '.git', 'info', 'exclude'))).toEqual(pathBytesOf(exclude));
        });
      }
    },
    TIMEOUT,
  );
});
