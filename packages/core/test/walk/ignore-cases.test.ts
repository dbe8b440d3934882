// Named ignore-file cases, each in its own folder of one tree: the files the walk keeps are
// written down, and git (when installed) must keep the same ones. Disagreements the random
// trees of git-fuzz.test.ts turned up belong here.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gitPaths, gitUntracked, hasGit } from './git-fixture.js';
import { onWindows, useTempTrees, walk, writeTree, type TreeSpec } from './walk-fixture.js';

const tree = useTempTrees();

interface Case {
  title: string;
  /** Ignore files by folder ('' for the case's own folder). */
  rules: Record<string, string>;
  files: string[];
  /** Files kept, ignore files included, sorted. */
  kept: string[];
}

const CASES: Case[] = [
  {
    title: 'blank lines and # comments are no rules',
    rules: { '': '# comment\n\n#hash.txt\n   \nx\n' },
    files: ['# comment', '#hash.txt', 'x', 'y'],
    kept: ['# comment', '#hash.txt', '.gitignore', 'y'],
  },
  {
    title: '\\# and \\! escape a leading # or !',
    rules: { '': '\\#hash.txt\n\\!bang.txt\n' },
    files: ['#hash.txt', '!bang.txt', 'hash.txt', 'bang.txt'],
    kept: ['.gitignore', 'bang.txt', 'hash.txt'],
  },
  {
    title: 'trailing spaces are dropped unless the last one is escaped',
    rules: { '': 'sp.txt   \nesc\\ \nmid \\  \n' },
    files: ['sp.txt', 'sp.txt ', 'esc', 'esc ', 'mid  ', 'mid ', 'mid'],
    kept: ['.gitignore', 'esc', 'mid', 'mid ', 'sp.txt '],
  },
  {
    title: 'the last matching line wins, ! re-includes',
    rules: { '': '*.log\n!keep*.log\nkeep-not.log\n' },
    files: ['a.log', 'keep.log', 'keep-not.log'],
    kept: ['.gitignore', 'keep.log'],
  },
  {
    title: 'a leading or middle / anchors to the ignore file’s folder',
    rules: { '': '/top.txt\nmid/name.txt\n' },
    files: ['top.txt', 'sub/top.txt', 'mid/name.txt', 'x/mid/name.txt'],
    kept: ['.gitignore', 'sub/top.txt', 'x/mid/name.txt'],
  },
  {
    title: 'a trailing / matches folders only',
    rules: { '': 'out/\n' },
    files: ['out/a.js', 'sub/out', 'sub/out2/out/b'],
    kept: ['.gitignore', 'sub/out'],
  },
  {
    title: '**/x, x/** and x/**/y',
    rules: { '': '**/cache\nlogs/**\nfoo/**/bar\n' },
    files: [
      'cache',
      'x/y/cache',
      'cachex',
      'logs/a',
      'logs/b/c',
      'logs2/a',
      'foo/bar',
      'foo/x/y/bar',
      'foo/barx',
      'x/foo/bar',
    ],
    kept: ['.gitignore', 'cachex', 'foo/barx', 'logs2/a', 'x/foo/bar'],
  },
  {
    title: '** that is not a whole name is a *',
    rules: { '': 'x**y\nd/**z\n' },
    files: ['xay', 'xa/y', 'd/az', 'd/a/z'],
    kept: ['.gitignore', 'd/a/z', 'xa/y'],
  },
  {
    title: 'a**/x: ** right after the literal start of a path pattern spans folders, as in git',
    rules: { '': 'a**/x\n' },
    files: ['a/x', 'ab/x', 'ab/c/x', 'ab/c/y', 'b/a/x'],
    kept: ['.gitignore', 'ab/c/y', 'b/a/x'],
  },
  {
    title: 'a\\/**: an escaped slash still makes a path pattern',
    rules: { '': 'a\\/**\n' },
    files: ['a/b', 'a/c/d', 'ab/x'],
    kept: ['.gitignore', 'ab/x'],
  },
  {
    title: '? matches one byte: é is two',
    rules: { '': 'caf?.txt\n' },
    files: ['café.txt', 'cafe.txt'],
    kept: ['.gitignore', 'café.txt'],
  },
  {
    title: '?? matches é',
    rules: { '': 'caf??.txt\nna[!i]?ve\n' },
    files: ['café.txt', 'cafe.txt', 'naïve', 'naive'],
    kept: ['.gitignore', 'cafe.txt', 'naive'],
  },
  {
    title: 'bracket expressions: ranges, negation, POSIX classes',
    rules: { '': '[[:digit:]]*.log\n[!a-c]?.tmp\n[^x].bak\n[]]\n' },
    files: ['1.log', 'x.log', 'd1.tmp', 'a1.tmp', 'y.bak', 'x.bak', ']'],
    kept: ['.gitignore', 'a1.tmp', 'x.bak', 'x.log'],
  },
  {
    title: 'malformed patterns match nothing',
    rules: { '': '[\n[[:nope:]]\n\\\n!\n/\n' },
    files: ['[', 'n', '\\', '!', 'x'],
    kept: ['!', '.gitignore', '[', '\\', 'n', 'x'],
  },
  {
    title: 'case-sensitive',
    rules: { '': '*.LOG\n' },
    files: ['a.LOG', 'a.log'],
    kept: ['.gitignore', 'a.log'],
  },
  {
    title: 'a NUL ends the line',
    rules: { '': 'ab\0cd\n' },
    files: ['ab', 'abcd'],
    kept: ['.gitignore', 'abcd'],
  },
  {
    title: 'CRLF line ends and a byte order mark',
    rules: { '': '\uFEFFa.txt\r\nb.txt\r\n#c.txt\r\n' },
    files: ['a.txt', 'b.txt', '#c.txt'],
    kept: ['#c.txt', '.gitignore'],
  },
  {
    title: 'a deeper ignore file wins, both ways',
    rules: { '': 'x.txt\n!y.txt\n', sub: '!x.txt\ny.txt\n' },
    files: ['x.txt', 'y.txt', 'sub/x.txt', 'sub/y.txt'],
    kept: ['.gitignore', 'sub/.gitignore', 'sub/x.txt', 'y.txt'],
  },
  {
    title: 'nothing below an ignored folder can be re-included',
    rules: { '': 'build/\n!build/keep.txt\n', build: '!keep.txt\n' },
    files: ['build/keep.txt', 'build/other.txt'],
    kept: ['.gitignore'],
  },
  {
    title: 'a folder a deeper file re-includes is walked, and its paths matched on their own',
    rules: { '': 'gen*/\n*.js\n', src: '!gen/\n' },
    files: ['gen/a.txt', 'src/gen/a.txt', 'src/gen/b.js', 'src/gen/genx/c.txt'],
    kept: ['.gitignore', 'src/.gitignore', 'src/gen/a.txt'],
  },
  {
    title: 'extension and literal-path lines, looked up, still lose to any later line',
    rules: { '': '*.log\n!keep*\n/a/b.log\n!a/*.log\n*.log/\nd/x\n!d/*\n', d: '!*.log\n/y.txt\n' },
    files: ['x.log', 'keep.log', 'a/b.log', 'a/c.log', 'z.log/f', 'd/x', 'd/y.txt', 'd/e.log', 'b.log.txt'],
    kept: ['.gitignore', 'a/b.log', 'a/c.log', 'b.log.txt', 'd/.gitignore', 'd/e.log', 'd/x', 'keep.log'],
  },
  {
    title: 'path lines looked up by their first folder still lose to any later line',
    rules: { '': 'src/**/*.js\n!src/b/*.js\nsrc/gen*/\n!src/gen1/\nlib/*/x\n!lib/a/x\n!**/keep.js\n', src: '!gen2/\n' },
    files: [
      'src/a.js',
      'src/keep.js',
      'src/b/c.js',
      'src/gen1/d.ts',
      'src/gen2/e.ts',
      'src/gen3/f.ts',
      'lib/a/x',
      'lib/b/x',
    ],
    kept: ['.gitignore', 'lib/a/x', 'src/.gitignore', 'src/b/c.js', 'src/gen1/d.ts', 'src/gen2/e.ts', 'src/keep.js'],
  },
  {
    title: '** alone ignores everything, the ignore file too',
    rules: { '': '**\n' },
    files: ['a', 'b/c'],
    kept: [],
  },
];

function caseTree(): TreeSpec {
  const spec: TreeSpec = {};
  CASES.forEach(({ rules, files }, i) => {
    for (const [folder, text] of Object.entries(rules))
      spec[`c${i}/${folder === '' ? '' : `${folder}/`}.gitignore`] = text;
    for (const file of files) spec[`c${i}/${file}`] = 'x';
  });
  return spec;
}

function keptIn(paths: readonly string[], i: number): string[] {
  return paths
    .filter((path) => path.startsWith(`c${i}/`))
    .map((path) => path.slice(`c${i}/`.length))
    .sort();
}

describe.skipIf(onWindows)('ignore files: named cases', () => {
  let root = '';
  let walked: string[] = [];
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'reposcan-ignore-cases-'));
    await writeTree(root, caseTree());
    walked = (await walk(root)).paths;
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it.each(CASES.map((c, i) => [c.title, i] as const))('%s', (_title, i) => {
    expect(keptIn(walked, i)).toEqual((CASES[i] as Case).kept);
  });

  it.skipIf(!hasGit)('git keeps the same files in every case', async () => {
    const home = await mkdtemp(join(tmpdir(), 'reposcan-git-home-'));
    try {
      gitPaths(root, home, ['init', '-q']);
      const kept = gitUntracked(root, home, false);
      CASES.forEach(({ title, kept: expected }, i) => expect(keptIn(kept, i), title).toEqual(expected));
    } finally {
      await rm(join(root, '.git'), { recursive: true, force: true });
      await rm(home, { recursive: true, force: true });
    }
  });
});

describe('patterns that make git backtrack for minutes', () => {
  const line = 'a/**/a/**/a/**/a/**/a/**/a/**/a/**/a/**/a/**/a/**/b';
  const deep = 'a/'.repeat(45);

  it('a/**/a/…/b in a .gitignore, against a 45-deep path: the right verdict', async () => {
    const root = await tree({
      '.gitignore': `${line}\n`,
      [`${deep}b`]: 'x',
      [`${deep}c`]: 'x',
      [`${'a/'.repeat(9)}b`]: 'x',
    });
    const result = await walk(root);
    expect(result.paths).toEqual([`${deep}c`, `${'a/'.repeat(9)}b`, '.gitignore']);
    expect(result.reasons).toEqual({ [`${deep}b`]: 'ignored' });
  });

  it('the same line 10 times, in ignore files at three levels', async () => {
    const ten = `${line}\n`.repeat(10);
    const root = await tree({
      '.gitignore': ten,
      'a/.gitignore': ten,
      'a/a/a/.gitignore': `!${line}\n${ten}`,
      [`${deep}b`]: 'x',
      [`${deep}c`]: 'x',
    });
    const result = await walk(root);
    expect(result.paths).toEqual([`${deep}c`, 'a/a/a/.gitignore', 'a/.gitignore', '.gitignore']);
    expect(result.reasons).toEqual({ [`${deep}b`]: 'ignored' });
  });
});
