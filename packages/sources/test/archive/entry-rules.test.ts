// The name, type and collision rules on their own, including the ones yauzl already enforces
// (absolute, "..", backslash), so the policy holds whatever the library's options.
import { describe, expect, it } from 'vitest';
import { isScanError } from '@reposcan/contracts';
import { EntryCollisions } from '../../src/archive/entry-collisions.js';
import { entryKind } from '../../src/archive/entry-kind.js';
import { entryPathComponents, isMacMetadata } from '../../src/archive/entry-names.js';
import { singleTopLevelFolder } from '../../src/archive/top-level-folder.js';
import { LIMITS } from './zip-fixtures.js';

const components = (name: string, raw = Buffer.from(name)) => entryPathComponents(name, raw, LIMITS);

function refusal(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(isScanError(error) && error.code).toBe('UNSAFE_ARCHIVE');
    return (error as Error).message;
  }
  throw new Error('expected UNSAFE_ARCHIVE');
}

describe('entryPathComponents', () => {
  it('splits names and drops empty and "." parts', () => {
    expect(components('src/app.ts')).toEqual(['src', 'app.ts']);
    expect(components('src/lib/')).toEqual(['src', 'lib']);
    expect(components('./src//a.ts')).toEqual(['src', 'a.ts']);
    expect(components('./')).toEqual([]);
  });

  it.each(['../x', 'a/../../x', 'a/..', '/abs', '//server/share', 'C:/x', 'c:x', 'a\\b', '..\\x'])(
    'refuses %j',
    (name) => {
      refusal(() => components(name));
    },
  );

  it('allows ".." inside a name part and a colon after the first part', () => {
    expect(components('a/..b/c..d')).toEqual(['a', '..b', 'c..d']);
    expect(components('docs/a:b.md')).toEqual(['docs', 'a:b.md']);
  });

  it('refuses control characters in the decoded name and in the raw bytes', () => {
    expect(refusal(() => components('a\u0000b'))).toMatch(/control characters/);
    expect(refusal(() => components('a\u009bb'))).toMatch(/control characters/);
    // A non-UTF-8 name with byte 0x0a decodes (CP437) as "◙": the raw bytes still tell.
    expect(refusal(() => components('a◙b', Buffer.from([0x61, 0x0a, 0x62])))).toMatch(/control characters/);
  });

  it('enforces name, part and depth limits in UTF-8 bytes', () => {
    const limits = { ...LIMITS, maxNameBytes: 10, maxComponentBytes: 4, maxDepth: 2 };
    expect(entryPathComponents('éé/b', Buffer.from('éé/b'), limits)).toEqual(['éé', 'b']);
    refusal(() => entryPathComponents('ééé/b', Buffer.from('ééé/b'), limits));
    refusal(() => entryPathComponents('a/b/c', Buffer.from('a/b/c'), limits));
    refusal(() => entryPathComponents('abc/defg/h', Buffer.from('abc/defg/h'), limits));
  });
});

describe('entryKind', () => {
  const kind = (fileName: string, mode: number) => entryKind({ fileName, externalFileAttributes: mode * 0x10000 });

  it('reads regular files and folders, with or without a Unix mode', () => {
    expect(kind('a.txt', 0o100644)).toBe('file');
    expect(kind('a.txt', 0)).toBe('file');
    expect(kind('d/', 0)).toBe('directory');
    expect(kind('d/', 0o40755)).toBe('directory');
    expect(kind('d', 0o40000)).toBe('directory');
  });

  it('refuses links, special files and contradictions', () => {
    expect(refusal(() => kind('l', 0o120777))).toMatch(/symbolic link/);
    for (const mode of [0o010644, 0o020644, 0o060644, 0o140644, 0o170000]) {
      expect(refusal(() => kind('s', mode))).toMatch(/special file/);
    }
    refusal(() => kind('f/', 0o100644));
  });
});

describe('EntryCollisions', () => {
  it('accepts distinct paths, repeated folders and implied parents', () => {
    const collisions = new EntryCollisions();
    collisions.add(['src'], 'directory');
    collisions.add(['src', 'a.ts'], 'file');
    collisions.add(['src'], 'directory');
    collisions.add(['src', 'lib', 'b.ts'], 'file');
    collisions.add(['src', 'lib'], 'directory');
  });

  it.each([
    ['an exact duplicate', [['a'], 'file'], [['a'], 'file']],
    ['a case twin', [['README'], 'file'], [['readme'], 'file']],
    ['an NFD twin', [['caf\u00e9'], 'file'], [['cafe\u0301'], 'file']],
    ['a file then a folder', [['a'], 'file'], [['a', 'b'], 'file']],
    ['a folder then a file', [['a', 'b'], 'file'], [['A'], 'file']],
    ['a folder spelled two ways', [['Src', 'a'], 'file'], [['src', 'b'], 'file']],
  ] as const)('refuses %s', (_label, first, second) => {
    const collisions = new EntryCollisions();
    collisions.add(first[0], first[1]);
    refusal(() => collisions.add(second[0], second[1]));
  });
});

describe('singleTopLevelFolder and isMacMetadata', () => {
  const planned = (...names: string[]) =>
    names.map((name) => ({
      entry: undefined as never,
      kind: name.endsWith('/') ? ('directory' as const) : ('file' as const),
      components: name.split('/').filter(Boolean),
    }));

  it('names the one folder everything sits in', () => {
    expect(singleTopLevelFolder(planned('repo/', 'repo/a', 'repo/b/c'))).toBe('repo');
    expect(singleTopLevelFolder(planned('repo/a'))).toBe('repo');
    expect(singleTopLevelFolder(planned('repo/'))).toBe('repo');
    expect(singleTopLevelFolder(planned('repo/a', 'other/b'))).toBeNull();
    expect(singleTopLevelFolder(planned('repo/a', 'repo'))).toBeNull();
    expect(singleTopLevelFolder(planned())).toBeNull();
  });

  it('recognises Finder metadata', () => {
    expect(isMacMetadata(['__MACOSX', 'repo', '._a'])).toBe(true);
    expect(isMacMetadata(['repo', '.DS_Store'])).toBe(true);
    expect(isMacMetadata(['repo', 'src', '__MACOSX'])).toBe(false);
  });
});
