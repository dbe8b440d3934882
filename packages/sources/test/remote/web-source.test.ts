import { describe, expect, it } from 'vitest';
import { buildWebSource, parseRepoPath } from '../../src/remote/index.js';

describe('buildWebSource', () => {
  it('links files at the commit when known, else at the branch', () => {
    const parsed = parseRepoPath('https://gitlab.com/g/sub/repo/-/tree/main/docs');
    if (parsed.kind !== 'remote') throw new Error('not a remote');
    expect(buildWebSource(parsed.url, 'main', 'f'.repeat(40), 'docs')).toEqual({
      type: 'remote',
      url: 'https://gitlab.com/g/sub/repo',
      hostFamily: 'gitlab',
      ref: 'f'.repeat(40),
      branch: 'main',
      commit: 'f'.repeat(40),
      subdir: 'docs',
    });
    expect(buildWebSource(parsed.url, 'main', null, null)).toMatchObject({ ref: 'main', commit: null, subdir: null });
  });
});
