// The walk against git itself: on a tree of tricky ignore files, the kept files must be exactly
// what `git ls-files --others --exclude-standard` lists, and the ignored ones what git ignores.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onWindows, useTempTrees, walk, type TreeSpec } from './walk-fixture.js';

const hasGit = spawnSync('git', ['--version']).status === 0;
const tree = useTempTrees();

const IGNORE_FILES: TreeSpec = {
  '.gitignore': [
    '# a comment, then a blank line',
    '',
    '*.log',
    '!important.log',
    'build/',
    '/anchored.txt',
    '\\#hash.txt',
    '\\!bang.txt',
    'trailing.txt   ',
    'escaped\\ ',
    '**/cache/',
    'foo/**/bar',
    'temp?/',
    '[Bb]in/',
    'vendor/*',
    '!vendor/keep/',
    'logs/**',
    '!logs/**/',
    '!logs/**/*.keep',
    '*.o',
    'doc/*.html',
    'a/b/c/',
    'secret/',
    'generated',
  ].join('\n'),
  'src/.gitignore': '!build/\n*.gen.ts\n!*.log\n/local.txt\n',
  'src/build/.gitignore': '*.js\n!keep.js\n',
  'lib/.gitignore': '*\n!*/\n!*.py\n',
  'lib/pkg/.gitignore': '!*.txt\n',
  'secret/.gitignore': '!x.txt\n',
  'docs/.gitignore': '!*.log\nprivate/\n*.md\n!README.md\n',
  'docs/api/.gitignore': '!*.md\n',
  'deep/a/b/.gitignore': '/c/d.txt\n**/e.txt\n!/c/e.txt\n',
  'tests/.gitignore': 'fixtures/*\n!fixtures/keep/\nfixtures/keep/*.bin\n',
  'weird/.gitignore': '*.[oa]\n!lib.a\n\\[x\\].txt\nsp ace.txt\n**/x/**/y.txt\n',
  'a/b/.gitignore': '!c/\n',
  'crlf/.gitignore': 'one.txt\r\ntwo/\r\n',
};

const FILES: string[] = [
  'a.log',
  'important.log',
  'main.c',
  'main.o',
  'anchored.txt',
  'sub/anchored.txt',
  '#hash.txt',
  '!bang.txt',
  'trailing.txt',
  'escaped ',
  'escaped',
  'build/out.js',
  'pkg/build/out.js',
  'cache/x',
  'pkg/cache/y',
  'cache.txt',
  'foo/bar',
  'foo/x/y/bar',
  'foo/x/bar/z.txt',
  'temp1/t.txt',
  'temp12/t.txt',
  'bin/b',
  'Bin/b',
  'BIN/b',
  'vendor/lib.js',
  'vendor/keep/k.js',
  'vendor/other/o.js',
  'logs/a.txt',
  'logs/b.keep',
  'logs/x/c.keep',
  'logs/x/d.txt',
  'doc/index.html',
  'doc/sub/page.html',
  'a/b/c/f.txt',
  'a/b/d.txt',
  'secret/x.txt',
  'secret/y.txt',
  'generated',
  'pkg/generated/g.txt',
  'src/main.ts',
  'src/api.gen.ts',
  'src/debug.log',
  'src/local.txt',
  'src/sub/local.txt',
  'src/build/app.js',
  'src/build/keep.js',
  'src/build/style.css',
  'lib/mod.py',
  'lib/readme.txt',
  'lib/pkg/a.py',
  'lib/pkg/b.txt',
  'lib/pkg/c.md',
  'docs/README.md',
  'docs/guide.md',
  'docs/trace.log',
  'docs/private/p.txt',
  'docs/api/ref.md',
  'deep/a/b/c/d.txt',
  'deep/a/b/c/e.txt',
  'deep/a/b/x/e.txt',
  'deep/a/b/e.txt',
  'tests/fixtures/f.json',
  'tests/fixtures/keep/k.json',
  'tests/fixtures/keep/k.bin',
  'tests/unit.py',
  'weird/m.o',
  'weird/lib.a',
  'weird/z.a',
  'weird/[x].txt',
  'weird/x.txt',
  'weird/sp ace.txt',
  'weird/x/y.txt',
  'weird/q/x/r/y.txt',
  'weird/ünïcödé.txt',
  'crlf/one.txt',
  'crlf/two/t.txt',
  'crlf/three.txt',
  ...(onWindows ? [] : ['weird/new\nline.txt', 'weird/tab\there.txt']),
];

function git(cwd: string, home: string, args: string[]): string[] {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    GIT_CONFIG_NOSYSTEM: '1',
    HOME: home,
    XDG_CONFIG_HOME: home,
  };
  const out = execFileSync('git', ['-c', 'core.ignorecase=false', ...args], { cwd, env, encoding: 'utf8' });
  return out.split('\0').filter((path) => path !== '');
}

describe.skipIf(!hasGit)('ignore files agree with git', () => {
  let home = '';
  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), 'reposcan-git-home-'));
  });
  afterAll(async () => {
    await rm(home, { recursive: true, force: true });
  });

  it('keeps exactly the files git lists as untracked and not ignored', async () => {
    const spec: TreeSpec = { ...IGNORE_FILES };
    for (const path of FILES) spec[path] = `content of ${path}`;
    const root = await tree(spec);
    git(root, home, ['init', '-q']);

    const gitKept = git(root, home, ['ls-files', '--others', '--exclude-standard', '-z']).sort();
    const gitIgnored = git(root, home, ['ls-files', '--others', '--ignored', '--exclude-standard', '-z']).sort();
    // The fixture is meant to exercise both sides.
    expect(gitKept.length).toBeGreaterThan(30);
    expect(gitIgnored.length).toBeGreaterThan(30);

    const result = await walk(root);
    expect([...result.paths].sort()).toEqual(gitKept);

    // The walk reports an ignored folder once; git lists every file below it.
    const allFiles = Object.keys(spec);
    const walkIgnored = result.skipped
      .filter(({ reason }) => reason === 'ignored')
      .flatMap(({ path }) => (path.endsWith('/') ? allFiles.filter((file) => file.startsWith(path)) : [path]))
      .sort();
    expect(walkIgnored).toEqual(gitIgnored);
    expect(result.skipped.filter(({ reason }) => reason !== 'ignored')).toEqual([
      { path: '.git/', reason: 'excluded_dir' },
    ]);
  });
});
