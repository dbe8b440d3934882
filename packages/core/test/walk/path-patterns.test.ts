import { describe, expect, it } from 'vitest';
import { useTempTrees, walk } from './walk-fixture.js';

const tree = useTempTrees();

const FILES = [
  'top.txt',
  'README.md',
  'a.py',
  'lib/top.txt',
  'src/main.ts',
  'src/util.py',
  'src/deep/x.ts',
  'src/deep/y.py',
  'test/t.py',
  'pkg/test/u.ts',
  'pkg/test/sub/v.ts',
  'docs/guide.md',
  'docs/api/ref.md',
  'pkg/docs/note.md',
];

async function keptWith(includePatterns: string[], excludePatterns: string[]) {
  const root = await tree(Object.fromEntries(FILES.map((path) => [path, 'x'])));
  return walk(root, { options: { includePatterns, excludePatterns } });
}

describe('include_patterns and exclude_patterns', () => {
  it.each<[string, string[], string[], string[]]>([
    ['a name pattern matches at any depth', ['*.py'], [], ['a.py', 'src/deep/y.py', 'src/util.py', 'test/t.py']],
    ['a plain name matches at any depth', ['top.txt'], [], ['lib/top.txt', 'top.txt']],
    ['* stays within one folder', ['src/*.ts'], [], ['src/main.ts']],
    ['** spans folders', ['src/**/*.ts'], [], ['src/deep/x.ts', 'src/main.ts']],
    [
      '**/name/** matches inside that folder at any depth',
      ['**/test/**'],
      [],
      ['pkg/test/sub/v.ts', 'pkg/test/u.ts', 'test/t.py'],
    ],
    [
      'dir/ matches a folder and everything below, at any depth',
      ['docs/'],
      [],
      ['docs/api/ref.md', 'docs/guide.md', 'pkg/docs/note.md'],
    ],
    ['a leading / anchors to the repository root', ['/top.txt'], [], ['top.txt']],
    ['! takes files back out of the includes', ['*.py', '!src/**'], [], ['a.py', 'test/t.py']],
    [
      'exclude alone drops what it matches',
      [],
      ['*.md', '*.py'],
      ['lib/top.txt', 'pkg/test/sub/v.ts', 'pkg/test/u.ts', 'src/deep/x.ts', 'src/main.ts', 'top.txt'],
    ],
    [
      '! keeps a file among the excludes',
      [],
      ['*.md', '!README.md'],
      [
        'README.md',
        'a.py',
        'lib/top.txt',
        'pkg/test/sub/v.ts',
        'pkg/test/u.ts',
        'src/deep/x.ts',
        'src/deep/y.py',
        'src/main.ts',
        'src/util.py',
        'test/t.py',
        'top.txt',
      ],
    ],
    ['exclude beats include', ['src/**'], ['*.py'], ['src/deep/x.ts', 'src/main.ts']],
    [
      'an excluded folder beats an include',
      ['*.ts'],
      ['src/deep/'],
      ['pkg/test/sub/v.ts', 'pkg/test/u.ts', 'src/main.ts'],
    ],
  ])('%s: include %j exclude %j', async (_title, include, exclude, expected) => {
    const result = await keptWith(include, exclude);
    expect([...result.paths].sort()).toEqual(expected);
    // Every other file is accounted for as `pattern`.
    const dropped = FILES.filter((path) => !expected.includes(path));
    for (const path of dropped) {
      const folder = result.skipped.find((entry) => entry.path.endsWith('/') && path.startsWith(entry.path));
      expect(folder?.reason ?? result.reasons[path]).toBe('pattern');
    }
  });

  it('prunes a folder matched by an exclude pattern, recording it once', async () => {
    const result = await keptWith([], ['src/']);
    expect(result.skipped).toEqual([{ path: 'src/', reason: 'pattern' }]);
  });

  it('never prunes folders for an include pattern: non-matching files are skipped one by one', async () => {
    const result = await keptWith(['x.ts'], []);
    expect(result.paths).toEqual(['src/deep/x.ts']);
    expect(result.skipped.some((entry) => entry.path.endsWith('/'))).toBe(false);
    expect(result.skipped).toHaveLength(FILES.length - 1);
  });

  it('matches root-relative paths, subdir prefix included, in a subdir scan', async () => {
    const root = await tree(Object.fromEntries(FILES.map((path) => [path, 'x'])));
    const result = await walk(root, { subdir: 'src', options: { includePatterns: ['src/*.ts'] } });
    expect(result.paths).toEqual(['src/main.ts']);
  });

  it('drops files rejected by the extra per-file filter as `pattern`', async () => {
    const root = await tree(Object.fromEntries(FILES.map((path) => [path, 'x'])));
    const result = await walk(root, { acceptFile: (path) => path.endsWith('.md') });
    expect(result.paths).toEqual(['docs/api/ref.md', 'docs/guide.md', 'pkg/docs/note.md', 'README.md']);
    expect(new Set(Object.values(result.reasons))).toEqual(new Set(['pattern']));
  });
});

describe('patterns that are not gitignore syntax', () => {
  it('reads braces and extglobs literally', async () => {
    const root = await tree({ 'a.txt': 'x', 'b.txt': 'x', '{a,b}.txt': 'x', '+(a)': 'x', a: 'x' });
    expect((await walk(root, { options: { includePatterns: ['{a,b}.txt'] } })).paths).toEqual(['{a,b}.txt']);
    expect((await walk(root, { options: { includePatterns: ['+(a)'] } })).paths).toEqual(['+(a)']);
  });

  it('matches nothing with patterns other matchers blow up on, against long names', async () => {
    const name = `${'a'.repeat(240)}!`;
    const root = await tree({ [name]: 'x', [`${'a/'.repeat(40)}${'a'.repeat(200)}`]: 'x' });
    const patterns = [
      '+(+(a))',
      '*(+(a))',
      '+(a|aa)',
      '+(*|?)',
      '{1..10000000}',
      `${'{a,'.repeat(80)}b${'}'.repeat(80)}`,
      '[[:constructor:]]',
      `${'*a'.repeat(100)}*b`,
      `${'**/a'.repeat(50)}/b`,
      `${'?'.repeat(200)}b`,
      '[z-a]',
      '[',
      '\\',
    ];
    const result = await walk(root, { options: { includePatterns: patterns, excludePatterns: patterns } });
    expect(result.paths).toEqual([]);
    expect(result.skipped).toEqual([
      { path: `${'a/'.repeat(40)}${'a'.repeat(200)}`, reason: 'pattern' },
      { path: name, reason: 'pattern' },
    ]);
  });
});

describe('patterns that make git backtrack for minutes', () => {
  const line = 'a/**/a/**/a/**/a/**/a/**/a/**/a/**/a/**/a/**/a/**/b';
  const deep = 'a/'.repeat(45);

  it.each([1, 10])('exclude_patterns: a/**/a/…/b %i times, against a 45-deep path', async (times) => {
    const root = await tree({ [`${deep}b`]: 'x', [`${deep}c`]: 'x' });
    const result = await walk(root, { options: { excludePatterns: Array<string>(times).fill(line) } });
    expect(result.paths).toEqual([`${deep}c`]);
    expect(result.reasons).toEqual({ [`${deep}b`]: 'pattern' });
  });

  it('include_patterns: the same line', async () => {
    const root = await tree({ [`${deep}b`]: 'x', [`${deep}c`]: 'x' });
    const result = await walk(root, { options: { includePatterns: [line] } });
    expect(result.paths).toEqual([`${deep}b`]);
  });
});

describe('how patterns match', () => {
  it('per byte of the UTF-8 path: ? is one byte', async () => {
    const root = await tree({ 'café.txt': 'x', 'cafe.txt': 'x' });
    expect((await walk(root, { options: { includePatterns: ['caf?.txt'] } })).paths).toEqual(['cafe.txt']);
    expect((await walk(root, { options: { includePatterns: ['caf??.txt'] } })).paths).toEqual(['café.txt']);
  });

  it('case-sensitively, whatever the host', async () => {
    const root = await tree({ 'A.TXT': 'x', 'b.txt': 'x' });
    expect((await walk(root, { options: { excludePatterns: ['*.txt'] } })).paths).toEqual(['A.TXT']);
  });

  it('a file below an excluded folder is dropped in a subdir scan too', async () => {
    const root = await tree({ 'src/a.ts': 'x', 'src/b/c.ts': 'x', 'lib/d.ts': 'x' });
    const result = await walk(root, { subdir: 'src', options: { excludePatterns: ['src/'] } });
    expect(result.paths).toEqual([]);
    expect(result.reasons).toEqual({ 'src/a.ts': 'pattern', 'src/b/': 'pattern' });
  });

  it('an entry holding a newline stays one rule', async () => {
    const root = await tree({ a: 'x', b: 'x' });
    expect((await walk(root, { options: { excludePatterns: ['a\nb'] } })).paths).toEqual(['a', 'b']);
  });
});
