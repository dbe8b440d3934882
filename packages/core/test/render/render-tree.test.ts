import { describe, expect, it } from 'vitest';
import { renderTree } from '../../src/render/render-tree.js';

const PATHS = ['README.md', 'src/b.ts', 'src/A.ts', 'src/lib/deep/x.ts', 'docs/guide.md', 'Zeta.txt', 'alpha.txt'];

describe('renderTree', () => {
  it('draws folders first, then files, case-insensitively sorted', () => {
    expect(renderTree('repo', PATHS)).toBe(
      [
        'repo/',
        '├── docs/',
        '│   └── guide.md',
        '├── src/',
        '│   ├── lib/',
        '│   │   └── deep/',
        '│   │       └── x.ts',
        '│   ├── A.ts',
        '│   └── b.ts',
        '├── alpha.txt',
        '├── README.md',
        '└── Zeta.txt',
      ].join('\n'),
    );
  });

  it('collapses levels deeper than tree_depth to └── ...', () => {
    expect(renderTree('repo', PATHS, 1)).toBe(
      [
        'repo/',
        '├── docs/',
        '│   └── ...',
        '├── src/',
        '│   └── ...',
        '├── alpha.txt',
        '├── README.md',
        '└── Zeta.txt',
      ].join('\n'),
    );
    expect(renderTree('repo', PATHS, 2).split('\n')).toContain('│   ├── lib/');
    expect(renderTree('repo', PATHS, 2).split('\n')).toContain('│   │   └── ...');
  });

  it('draws only the root for an empty scan', () => {
    expect(renderTree('empty', [])).toBe('empty/');
  });

  it('escapes control characters in names so they cannot break lines', () => {
    expect(renderTree('r', ['a\nb.txt'])).toBe('r/\n└── a\\u000ab.txt');
  });

  it('shows a backslash doubled, so a name with a real control or bidi character and one spelling its escape differ', () => {
    const real = 'a\u202eb.txt';
    const spelt = 'a\\u202eb.txt';
    expect(renderTree('r', [real, spelt]).split('\n').slice(1)).toEqual(['├── a\\\\u202eb.txt', '└── a\\u202eb.txt']);
  });
});
