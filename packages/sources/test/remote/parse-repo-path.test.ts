import { describe, expect, it } from 'vitest';
import { ScanError } from '@reposcan/contracts';
import { parseRepoPath } from '../../src/remote/index.js';
import type { RemoteSpec } from '../../src/remote/index.js';

// The URL grammar of remote repositories (docs/api.md). Pure: no process, no network.

function remote(input: string): RemoteSpec {
  const parsed = parseRepoPath(input);
  if (parsed.kind !== 'remote') throw new Error(`expected a remote for ${input}`);
  return parsed.url;
}

function codeOf(input: string): string | undefined {
  try {
    parseRepoPath(input);
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(ScanError);
    return (error as ScanError).code;
  }
}

type Expected = Pick<RemoteSpec, 'host' | 'owner' | 'repo' | 'hostFamily' | 'refFromUrl' | 'kindOfRef' | 'cloneUrl'>;

const GRAMMAR: Array<[string, Expected]> = [
  // plain forms, .git suffix, trailing slashes, query and fragment, case and trailing dot in the host
  ['https://github.com/owner/repo', gh('owner', 'repo', null, null)],
  ['https://github.com/owner/repo.git', gh('owner', 'repo', null, null)],
  ['https://github.com/owner/repo/', gh('owner', 'repo', null, null)],
  ['https://github.com/owner/repo.git/', gh('owner', 'repo', null, null)],
  ['https://github.com/owner/repo?tab=readme-ov-file#install', gh('owner', 'repo', null, null)],
  ['https://GitHub.COM./owner/repo', gh('owner', 'repo', null, null)],
  // GitHub web forms
  ['https://github.com/owner/repo/tree/main', gh('owner', 'repo', ['main'], 'tree')],
  ['https://github.com/owner/repo/tree/main/', gh('owner', 'repo', ['main'], 'tree')],
  [
    'https://github.com/owner/repo/tree/feature/x/docs/guide',
    gh('owner', 'repo', ['feature', 'x', 'docs', 'guide'], 'tree'),
  ],
  ['https://github.com/owner/repo/tree/feature%2Fx/docs', gh('owner', 'repo', ['feature', 'x', 'docs'], 'tree')],
  ['https://github.com/owner/repo/blob/main/src/index.ts', gh('owner', 'repo', ['main', 'src', 'index.ts'], 'blob')],
  [
    'https://github.com/owner/repo/blob/v1.2.0/README.md?plain=1#L10',
    gh('owner', 'repo', ['v1.2.0', 'README.md'], 'blob'),
  ],
  // SCP-style, read as https
  ['git@github.com:owner/repo.git', gh('owner', 'repo', null, null)],
  ['git@github.com:owner/repo', gh('owner', 'repo', null, null)],
  // Gitea family: codeberg.org, gitea.com, hosts named gitea/forgejo; GitHub-style forms plus /src/branch/
  [
    'https://codeberg.org/owner/repo/tree/main/docs',
    family('codeberg.org', 'gitea', ['owner'], 'repo', ['main', 'docs'], 'tree'),
  ],
  [
    'https://codeberg.org/owner/repo/src/branch/main/docs',
    family('codeberg.org', 'gitea', ['owner'], 'repo', ['main', 'docs'], 'tree'),
  ],
  ['https://codeberg.org/owner/repo/src/tag/v1', family('codeberg.org', 'gitea', ['owner'], 'repo', ['v1'], 'tree')],
  [
    'https://gitea.com/owner/repo/blob/main/a/b.md',
    family('gitea.com', 'gitea', ['owner'], 'repo', ['main', 'a', 'b.md'], 'blob'),
  ],
  [
    'https://git.gitea-host.example/owner/repo',
    family('git.gitea-host.example', 'gitea', ['owner'], 'repo', null, null),
  ],
  ['https://forgejo.example.net/owner/repo.git', family('forgejo.example.net', 'gitea', ['owner'], 'repo', null, null)],
  // GitLab, nested groups, /-/tree and /-/blob
  ['https://gitlab.com/group/repo', family('gitlab.com', 'gitlab', ['group'], 'repo', null, null)],
  ['https://gitlab.com/group/sub/repo.git', family('gitlab.com', 'gitlab', ['group', 'sub'], 'repo', null, null)],
  [
    'https://gitlab.com/g/sub/deeper/repo/-/tree/main/docs',
    family('gitlab.com', 'gitlab', ['g', 'sub', 'deeper'], 'repo', ['main', 'docs'], 'tree'),
  ],
  [
    'https://gitlab.com/g/sub/repo/-/tree/feature/x',
    family('gitlab.com', 'gitlab', ['g', 'sub'], 'repo', ['feature', 'x'], 'tree'),
  ],
  [
    'https://gitlab.com/g/sub/repo/-/blob/main/src/a.py',
    family('gitlab.com', 'gitlab', ['g', 'sub'], 'repo', ['main', 'src', 'a.py'], 'blob'),
  ],
  ['https://gitlab.example.org/team/repo', family('gitlab.example.org', 'gitlab', ['team'], 'repo', null, null)],
  ['git@gitlab.com:g/sub/repo.git', family('gitlab.com', 'gitlab', ['g', 'sub'], 'repo', null, null)],
  // Bitbucket
  ['https://bitbucket.org/owner/repo', family('bitbucket.org', 'bitbucket', ['owner'], 'repo', null, null)],
  [
    'https://bitbucket.org/owner/repo/src/main/docs/',
    family('bitbucket.org', 'bitbucket', ['owner'], 'repo', ['main', 'docs'], 'tree'),
  ],
  // hosts outside the families take the GitHub grammar
  [
    'https://git.example.com/owner/repo/tree/main/lib',
    family('git.example.com', 'github', ['owner'], 'repo', ['main', 'lib'], 'tree'),
  ],
  [
    'https://git.example.com/owner/repo/blob/main/lib/x.go',
    family('git.example.com', 'github', ['owner'], 'repo', ['main', 'lib', 'x.go'], 'blob'),
  ],
];

function gh(owner: string, repo: string, refFromUrl: string[] | null, kindOfRef: RemoteSpec['kindOfRef']): Expected {
  return family('github.com', 'github', [owner], repo, refFromUrl, kindOfRef);
}

function family(
  host: string,
  hostFamily: RemoteSpec['hostFamily'],
  owner: string[],
  repo: string,
  refFromUrl: string[] | null,
  kindOfRef: RemoteSpec['kindOfRef'],
): Expected {
  return {
    host,
    owner,
    repo,
    hostFamily,
    refFromUrl,
    kindOfRef,
    cloneUrl: `https://${host}/${[...owner, repo].join('/')}.git`,
  };
}

describe('parseRepoPath: URL grammar', () => {
  it.each(GRAMMAR)('%s', (input, expected) => {
    expect(remote(input)).toMatchObject({ ...expected, scheme: 'https', port: 443, hasCredentials: false });
  });

  it('gives the web URL without .git for file links', () => {
    expect(remote('https://gitlab.com/g/sub/repo.git/').webUrl).toBe('https://gitlab.com/g/sub/repo');
  });

  it('keeps a non-default port in both URLs and drops a default one', () => {
    expect(remote('https://git.example.com:8443/o/r/tree/main')).toMatchObject({
      port: 8443,
      cloneUrl: 'https://git.example.com:8443/o/r.git',
      webUrl: 'https://git.example.com:8443/o/r',
    });
    expect(remote('https://github.com:443/o/r').cloneUrl).toBe('https://github.com/o/r.git');
  });

  it('reads http URLs (policy decides on them later)', () => {
    expect(remote('http://git.example.com/o/r')).toMatchObject({
      scheme: 'http',
      port: 80,
      cloneUrl: 'http://git.example.com/o/r.git',
    });
  });

  it('normalises numeric IPv4 spellings and brackets IPv6 hosts only inside URLs', () => {
    expect(remote('https://0x7f.1/o/r').host).toBe('127.0.0.1');
    expect(remote('https://2130706433/o/r').host).toBe('127.0.0.1');
    expect(remote('https://0177.0.0.1/o/r').host).toBe('127.0.0.1');
    expect(remote('https://[2001:db8::1]/o/r')).toMatchObject({
      host: '2001:db8::1',
      cloneUrl: 'https://[2001:db8::1]/o/r.git',
    });
  });

  it('records credentials without keeping them', () => {
    const spec = remote('https://user:token@github.com/a/b');
    expect(spec.hasCredentials).toBe(true);
    expect(JSON.stringify(spec)).not.toContain('token');
  });
});

describe('parseRepoPath: local paths', () => {
  it('returns absolute paths as local, spaces included', () => {
    expect(parseRepoPath('/srv/repos/app')).toEqual({ kind: 'local', path: '/srv/repos/app' });
    expect(parseRepoPath('/srv/My Repos/app')).toEqual({ kind: 'local', path: '/srv/My Repos/app' });
  });
});

describe('parseRepoPath: refusals', () => {
  it.each([
    '',
    'github.com/owner/repo',
    'owner/repo',
    'relative/path',
    'C:\\repos\\app',
    'ext::sh -c touch% /tmp/pwned',
    'ext::sh',
    'fd::3',
    'transport::x',
    '--upload-pack=touch /tmp/pwned',
    '--upload-pack=touch',
    '-u',
    '-vu./x',
    'https://github.com/a/b\n',
    'https://github.com/a/b\u0000',
    '/srv/repo\u0000/etc',
    '/srv/\u001b[31mred',
    'https://github.com/a b',
    ' https://github.com/a/b',
    'git@github.com:a/b c',
    'git@github.com:a/b:c',
    'https://github.com/onlyowner',
    'https://github.com/a/b/issues/1',
    'https://github.com/a/b/tree',
    'https://github.com/a/b/blob/main',
    'https://github.com/-a/b',
    'https://github.com/a/..git',
    'https://github.com/a/b/tree/main/%2e%2e%5cx',
    'https://github.com/a/%ZZ',
    'https://gitlab.com/onlygroup',
    'https://gitlab.com/g/r/-/issues/3',
    'https://bitbucket.org/o/r/commits/abc',
    'https://exa*mple.com/a/b',
    'https://github.com../a/b',
    `https://github.com/a/${'b'.repeat(5000)}`,
  ])('%j → 400 INVALID_REPO_PATH', (input) => {
    expect(codeOf(input)).toBe('INVALID_REPO_PATH');
  });

  it.each([
    'file:///etc',
    'FILE:///etc',
    'file://localhost/etc',
    'ssh://-oProxyCommand=x/y',
    'ssh://git@github.com/a/b.git',
    'git://h/x',
    'git://10.0.0.5:9418/x',
    'ftp://x/y',
  ])('%j → 403 SCHEME_NOT_ALLOWED', (input) => {
    expect(codeOf(input)).toBe('SCHEME_NOT_ALLOWED');
  });
});
