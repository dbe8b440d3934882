import { describe, expect, it } from 'vitest';
import { buildFileUrl } from '../../src/render/file-url.js';
import type { HostFamily, SourceInfo } from '../../src/types.js';

const SHA = '0123456789abcdef0123456789abcdef01234567';

function remote(hostFamily: HostFamily, url: string, ref = SHA): SourceInfo {
  return { type: 'remote', url, hostFamily, ref, branch: 'main', commit: SHA, subdir: null };
}

describe('buildFileUrl', () => {
  it.each([
    ['github', 'https://github.com/o/r', `https://github.com/o/r/blob/${SHA}/src/a.ts`],
    ['gitlab', 'https://gitlab.com/group/sub/r', `https://gitlab.com/group/sub/r/-/blob/${SHA}/src/a.ts`],
    ['bitbucket', 'https://bitbucket.org/o/r', `https://bitbucket.org/o/r/src/${SHA}/src/a.ts`],
    ['gitea', 'https://codeberg.org/o/r', `https://codeberg.org/o/r/src/commit/${SHA}/src/a.ts`],
  ] as const)('%s links the file at the scanned commit', (family, base, expected) => {
    expect(buildFileUrl(remote(family, base), 'src/a.ts')).toBe(expected);
  });

  it('uses the branch form on Gitea when the ref is a branch', () => {
    expect(buildFileUrl(remote('gitea', 'https://gitea.com/o/r', 'feature/x'), 'a.md')).toBe(
      'https://gitea.com/o/r/src/branch/feature/x/a.md',
    );
  });

  it('percent-encodes each path segment but keeps the slashes', () => {
    expect(buildFileUrl(remote('github', 'https://github.com/o/r'), 'docs/a b#?.md')).toBe(
      `https://github.com/o/r/blob/${SHA}/docs/a%20b%23%3F.md`,
    );
  });

  it('is empty for local paths and uploads', () => {
    const local: SourceInfo = {
      type: 'local',
      url: null,
      hostFamily: null,
      ref: null,
      branch: 'main',
      commit: null,
      subdir: null,
    };
    expect(buildFileUrl(local, 'a.ts')).toBe('');
    expect(buildFileUrl({ ...local, type: 'upload', branch: null }, 'a.ts')).toBe('');
  });
});
