import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/index.js';

const REDIS = 'redis://127.0.0.1:6379';

function load(env: Record<string, string>) {
  return loadConfig(env, { version: 'test' });
}

function problems(env: Record<string, string>): readonly string[] {
  try {
    load(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe('ROLE', () => {
  it('defaults to all without REDIS_URL (embedded) and to api with it', () => {
    expect(load({})).toMatchObject({ role: 'all', embedded: true });
    expect(load({ REDIS_URL: REDIS })).toMatchObject({ role: 'api', embedded: false });
  });

  it('accepts every role with Redis', () => {
    for (const role of ['api', 'worker', 'all'] as const)
      expect(load({ ROLE: role, REDIS_URL: REDIS }).role).toBe(role);
  });

  it('api and all work without Redis; worker does not', () => {
    expect(load({ ROLE: 'api' })).toMatchObject({ role: 'api', embedded: true });
    expect(load({ ROLE: 'all' }).role).toBe('all');
    expect(problems({ ROLE: 'worker' })).toEqual([
      expect.stringMatching(/^ROLE="worker": expected api or all without Redis/),
    ]);
  });

  it('the worker rule is reported together with other problems', () => {
    expect(problems({ ROLE: 'worker', PORT: 'x' }).map((p) => p.split('=')[0])).toEqual(['PORT', 'ROLE']);
  });

  it('an unparseable REDIS_URL is reported as such, not as a missing one', () => {
    expect(problems({ ROLE: 'worker', REDIS_URL: 'nope' }).map((p) => p.split('=')[0])).toEqual(['REDIS_URL']);
  });
});

describe('ALLOWED_LOCAL_ROOTS', () => {
  it('is empty (local paths refused) when unset or blank', () => {
    expect(load({}).allowedLocalRoots).toEqual([]);
    expect(load({ ALLOWED_LOCAL_ROOTS: '  ' }).allowedLocalRoots).toEqual([]);
  });

  it('splits on ":", normalises each path, drops empty entries and duplicates', () => {
    expect(load({ ALLOWED_LOCAL_ROOTS: '/srv/repos/:/home/me/code/../src: :/srv/repos' }).allowedLocalRoots).toEqual([
      '/srv/repos',
      '/home/me/src',
    ]);
  });

  it('refuses relative entries and names them', () => {
    const [problem] = problems({ ALLOWED_LOCAL_ROOTS: '/srv/ok:repos:./here' });
    expect(problem).toBe(
      'ALLOWED_LOCAL_ROOTS="/srv/ok:repos:./here": expected absolute folder paths separated by ":" (not absolute: repos, ./here)',
    );
  });
});

describe('GIT_ALLOWED_HOSTS', () => {
  it('lower-cases, trims and de-duplicates host and host:port entries', () => {
    expect(
      load({ GIT_ALLOWED_HOSTS: ' GitHub.com , git.Example.org:8443,github.com,127.0.0.1:3000,[::1]:8080 ,' })
        .gitAllowedHosts,
    ).toEqual(['github.com', 'git.example.org:8443', '127.0.0.1:3000', '[::1]:8080']);
  });

  it('"*" alone allows any public host', () => {
    expect(load({ GIT_ALLOWED_HOSTS: '*' }).gitAllowedHosts).toBe('*');
    expect(load({ GIT_ALLOWED_HOSTS: ' * ' }).gitAllowedHosts).toBe('*');
  });

  it.each([
    'https://github.com',
    'github.com/owner',
    'host:0',
    'host:70000',
    'host:',
    'a..b',
    '::1',
    '*,github.com',
    ',',
    'user@host',
    'host name',
  ])('refuses %j', (value) => {
    expect(problems({ GIT_ALLOWED_HOSTS: value })).toEqual([
      expect.stringMatching(/^GIT_ALLOWED_HOSTS=.*: expected a comma list of host names/),
    ]);
  });
});

describe('CORS_ORIGINS', () => {
  it('"*" or a list of origins, normalised', () => {
    expect(load({ CORS_ORIGINS: '*' }).corsOrigins).toBe('*');
    expect(load({ CORS_ORIGINS: 'https://App.example.com/, http://localhost:5173' }).corsOrigins).toEqual([
      'https://app.example.com',
      'http://localhost:5173',
    ]);
  });

  it.each([
    'example.com',
    'https://example.com/path',
    'ftp://example.com',
    'https://u:p@example.com',
    '*,https://a.example',
    'https://example.com?x=1',
  ])('refuses %j', (value) => {
    expect(problems({ CORS_ORIGINS: value })).toHaveLength(1);
  });
});

describe('TRUST_PROXY', () => {
  it.each([
    ['true', true],
    ['FALSE', false],
    ['0', 0],
    ['2', 2],
    ['loopback', ['loopback']],
    [
      'loopback, 10.0.0.0/8, 192.168.1.1, fc00::/7, 172.16.0.0/255.240.0.0',
      ['loopback', '10.0.0.0/8', '192.168.1.1', 'fc00::/7', '172.16.0.0/255.240.0.0'],
    ],
  ])('%j', (value, expected) => {
    expect(load({ TRUST_PROXY: value }).trustProxy).toEqual(expected);
  });

  it.each(['yes', '10.0.0.0/33', 'proxy.internal', '1.2.3.4/8/8', '101'])('refuses %j', (value) => {
    expect(problems({ TRUST_PROXY: value })).toHaveLength(1);
  });
});
