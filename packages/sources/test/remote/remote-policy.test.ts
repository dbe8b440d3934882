import type { LookupAddress } from 'node:dns';
import { describe, expect, it, vi } from 'vitest';
import type { ScanError } from '@reposcan/contracts';
import { checkRemotePolicy, parseRepoPath } from '../../src/remote/index.js';
import { isPrivateAddress } from '../../src/remote/private-address.js';
import type { RemotePolicy, RemoteSpec } from '../../src/remote/index.js';

// Policy decisions with an injected resolver: nothing here touches the network.

const DEFAULT_HOSTS = ['github.com', 'gitlab.com', 'bitbucket.org', 'codeberg.org', 'gitea.com'];
const STRICT: RemotePolicy = { allowedHosts: DEFAULT_HOSTS, allowHttp: false, allowPrivateHosts: false };

function spec(input: string): RemoteSpec {
  const parsed = parseRepoPath(input);
  if (parsed.kind !== 'remote') throw new Error('expected a remote');
  return parsed.url;
}

function resolvesTo(...addresses: string[]) {
  return vi.fn((_host: string, _options: { all: true }): Promise<LookupAddress[]> =>
    Promise.resolve(addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }))),
  );
}

async function refusal(input: string, policy: RemotePolicy, lookup = resolvesTo('140.82.112.3')): Promise<string> {
  const error = await checkRemotePolicy(spec(input), policy, { lookup }).then(
    () => undefined,
    (caught: unknown) => caught as ScanError,
  );
  if (!error) throw new Error(`${input} was allowed`);
  return error.code;
}

describe('checkRemotePolicy', () => {
  it('returns every resolved address of an allowed public host, for pinning', async () => {
    const lookup = resolvesTo('140.82.112.3', '140.82.112.4', '2606:50c0:8000::154');
    await expect(checkRemotePolicy(spec('https://github.com/a/b'), STRICT, { lookup })).resolves.toEqual([
      '140.82.112.3',
      '140.82.112.4',
      '2606:50c0:8000::154',
    ]);
    expect(lookup).toHaveBeenCalledWith('github.com', { all: true });
  });

  it.each([
    ['http://github.com/a/b', 'SCHEME_NOT_ALLOWED'],
    ['https://user:token@github.com/a/b', 'CREDENTIALS_IN_URL'],
    ['https://github.com@127.0.0.1/a/b', 'CREDENTIALS_IN_URL'],
    ['https://127.0.0.1/a/b', 'PRIVATE_ADDRESS'],
    ['https://169.254.169.254/a/b', 'PRIVATE_ADDRESS'],
    ['https://[::1]/a/b', 'PRIVATE_ADDRESS'],
    ['https://[::ffff:127.0.0.1]/a/b', 'PRIVATE_ADDRESS'],
    ['https://[::ffff:7f00:1]/a/b', 'PRIVATE_ADDRESS'],
    ['https://2130706433/a/b', 'PRIVATE_ADDRESS'],
    ['https://0x7f.1/a/b', 'PRIVATE_ADDRESS'],
    ['https://0177.0.0.1/a/b', 'PRIVATE_ADDRESS'],
    ['https://localhost/a/b', 'PRIVATE_ADDRESS'],
    ['https://localhost./a/b', 'PRIVATE_ADDRESS'],
    ['https://a.localhost/a/b', 'PRIVATE_ADDRESS'],
    ['https://evil.example/a/b', 'HOST_NOT_ALLOWED'],
    ['https://github.com.evil.test/a/b', 'HOST_NOT_ALLOWED'],
    ['https://8.8.8.8/a/b', 'HOST_NOT_ALLOWED'],
  ])('refuses %s with %s before any lookup', async (input, code) => {
    const lookup = resolvesTo('140.82.112.3');
    expect(await refusal(input, STRICT, lookup)).toBe(code);
    expect(lookup).not.toHaveBeenCalled();
  });

  it.each([
    ['10.0.0.5'],
    ['192.168.1.10'],
    ['172.20.0.1'],
    ['100.64.1.1'],
    ['0.0.0.0'],
    ['fd00::1'],
    ['fe80::1'],
    ['::ffff:10.0.0.5'],
    ['64:ff9b::a00:5'],
    ['2002:7f00:1::'],
  ])('refuses a public name that resolves to %s', async (address) => {
    const lookup = resolvesTo(address);
    expect(await refusal('https://github.com/a/b', STRICT, lookup)).toBe('PRIVATE_ADDRESS');
    expect(lookup).toHaveBeenCalledTimes(1);
  });

  it('says which setting refuses a host and what the user can do instead', async () => {
    const message = (input: string, lookup = resolvesTo('140.82.112.3')): Promise<string> =>
      checkRemotePolicy(spec(input), STRICT, { lookup }).then(
        () => `${input} was allowed`,
        (error: unknown) => (error as ScanError).message,
      );
    expect(await message('https://evil.example/a/b')).toMatch(
      /evil\.example .*GIT_ALLOWED_HOSTS.*scan a repository on one of those hosts, or ask the operator to add evil\.example/,
    );
    expect(await message('https://github.com/a/b', resolvesTo('10.0.0.5'))).toMatch(
      /GIT_ALLOW_PRIVATE_HOSTS is off.*scan a repository on a public host/,
    );
  });

  it('refuses when any one of several addresses is private', async () => {
    expect(await refusal('https://github.com/a/b', STRICT, resolvesTo('140.82.112.3', '10.0.0.5'))).toBe(
      'PRIVATE_ADDRESS',
    );
  });

  it('with "*" allows any public host but still no private one', async () => {
    const anyHost: RemotePolicy = { ...STRICT, allowedHosts: '*' };
    await expect(
      checkRemotePolicy(spec('https://git.example.com/a/b'), anyHost, { lookup: resolvesTo('93.184.215.14') }),
    ).resolves.toEqual(['93.184.215.14']);
    expect(await refusal('https://git.example.com/a/b', anyHost, resolvesTo('10.0.0.5'))).toBe('PRIVATE_ADDRESS');
    expect(await refusal('https://169.254.169.254/a/b', anyHost)).toBe('PRIVATE_ADDRESS');
  });

  it('matches allowlist entries as host (any port) or host:port', async () => {
    const lookup = resolvesTo('93.184.215.14');
    const policy: RemotePolicy = { ...STRICT, allowedHosts: ['git.example.com', 'code.example.org:8443'] };
    await expect(checkRemotePolicy(spec('https://git.example.com:9443/a/b'), policy, { lookup })).resolves.toHaveLength(
      1,
    );
    await expect(
      checkRemotePolicy(spec('https://code.example.org:8443/a/b'), policy, { lookup }),
    ).resolves.toHaveLength(1);
    expect(await refusal('https://code.example.org/a/b', policy, lookup)).toBe('HOST_NOT_ALLOWED');
  });

  it('allows http and private addresses only when told to', async () => {
    const relaxed: RemotePolicy = { allowedHosts: '*', allowHttp: true, allowPrivateHosts: true };
    await expect(checkRemotePolicy(spec('http://127.0.0.1:8080/a/b'), relaxed)).resolves.toEqual(['127.0.0.1']);
    await expect(
      checkRemotePolicy(spec('https://git.internal/a/b'), relaxed, { lookup: resolvesTo('10.0.0.5') }),
    ).resolves.toEqual(['10.0.0.5']);
  });

  it('reports an unknown host as REPO_NOT_FOUND and a resolver hiccup as retryable', async () => {
    const fail = (code: string) => vi.fn(() => Promise.reject(Object.assign(new Error(code), { code })));
    const notFound = await checkRemotePolicy(spec('https://github.com/a/b'), STRICT, {
      lookup: fail('ENOTFOUND'),
    }).catch((e: unknown) => e as ScanError);
    expect(notFound).toMatchObject({ code: 'REPO_NOT_FOUND', retryable: false });
    const again = await checkRemotePolicy(spec('https://github.com/a/b'), STRICT, { lookup: fail('EAI_AGAIN') }).catch(
      (e: unknown) => e as ScanError,
    );
    expect(again).toMatchObject({ code: 'CLONE_FAILED', retryable: true });
  });
});

describe('isPrivateAddress', () => {
  it.each([
    '127.0.0.1',
    '10.1.2.3',
    '172.31.255.255',
    '192.168.0.1',
    '169.254.169.254',
    '100.64.0.1',
    '198.18.0.1',
    '192.0.2.1',
    '224.0.0.1',
    '240.0.0.1',
    '255.255.255.255',
    '0.0.0.0',
    '::',
    '::1',
    'fc00::1',
    'fd12:3456::1',
    'fe80::1',
    'fec0::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:a9fe:a9fe',
    '64:ff9b::7f00:1',
    '2002:a00:1::1',
    '2001:db8::1',
    '2001:0:4136:e378::1',
  ])('%s is private', (address) => {
    expect(isPrivateAddress(address)).toBe(true);
  });

  it.each([
    '140.82.112.3',
    '8.8.8.8',
    '172.32.0.1',
    '100.128.0.1',
    '2606:50c0:8000::154',
    '2a00:1450:4001::1',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
  ])('%s is public', (address) => {
    expect(isPrivateAddress(address)).toBe(false);
  });
});
