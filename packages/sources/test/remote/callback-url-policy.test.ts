import type { LookupAddress } from 'node:dns';
import { describe, expect, it, vi } from 'vitest';
import type { ScanError } from '@reposcan/contracts';
import { checkCallbackUrl } from '../../src/remote/index.js';
import type { RemotePolicy } from '../../src/remote/index.js';

// The webhook wording of the shared host rules, with an injected resolver: no network.

const ANY_PUBLIC: RemotePolicy = { allowedHosts: '*', allowHttp: false, allowPrivateHosts: false };

function resolvesTo(...addresses: string[]) {
  return vi.fn((_host: string, _options: { all: true }): Promise<LookupAddress[]> =>
    Promise.resolve(addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }))),
  );
}

async function refusal(url: string, policy = ANY_PUBLIC, lookup = resolvesTo('93.184.215.14')): Promise<ScanError> {
  const error = await checkCallbackUrl(url, policy, { lookup }).then(
    () => undefined,
    (caught: unknown) => caught as ScanError,
  );
  if (!error) throw new Error(`${url} was allowed`);
  return error;
}

describe('checkCallbackUrl', () => {
  it('returns the URL and the addresses to connect to for a public https host', async () => {
    const lookup = resolvesTo('93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c');
    const checked = await checkCallbackUrl('https://Hooks.Example.com./x?token=1', ANY_PUBLIC, { lookup });
    expect(checked.addresses).toEqual(['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c']);
    expect(checked.url.search).toBe('?token=1');
    expect(lookup).toHaveBeenCalledWith('hooks.example.com', { all: true });
  });

  it('refuses a public name that resolves to a private address (the check run again at delivery)', async () => {
    const error = await refusal('https://hooks.example.com/x', ANY_PUBLIC, resolvesTo('93.184.215.14', '10.0.0.7'));
    expect(error.code).toBe('PRIVATE_ADDRESS');
    expect(error.message).toContain('WEBHOOK_ALLOW_PRIVATE_HOSTS');
  });

  it('allows private addresses and http only when told to', async () => {
    const open: RemotePolicy = { allowedHosts: '*', allowHttp: true, allowPrivateHosts: true };
    await expect(checkCallbackUrl('http://127.0.0.1:9/x', open)).resolves.toMatchObject({ addresses: ['127.0.0.1'] });
    expect((await refusal('http://hooks.example.com/x')).code).toBe('SCHEME_NOT_ALLOWED');
    expect((await refusal('https://[::1]/x')).code).toBe('PRIVATE_ADDRESS');
  });

  it('matches WEBHOOK_ALLOWED_HOSTS by host, or host:port', async () => {
    const listed: RemotePolicy = { ...ANY_PUBLIC, allowedHosts: ['hooks.example.com', 'ci.example.com:8443'] };
    await expect(
      checkCallbackUrl('https://hooks.example.com:444/x', listed, { lookup: resolvesTo('93.184.215.14') }),
    ).resolves.toBeDefined();
    await expect(
      checkCallbackUrl('https://ci.example.com:8443/x', listed, { lookup: resolvesTo('93.184.215.14') }),
    ).resolves.toBeDefined();
    expect((await refusal('https://ci.example.com/x', listed)).code).toBe('HOST_NOT_ALLOWED');
  });

  it('names a host that does not resolve as a bad callback_url, a DNS failure as retryable', async () => {
    const missing = vi.fn(() => Promise.reject(Object.assign(new Error('nope'), { code: 'ENOTFOUND' })));
    const error = await refusal('https://nowhere.example.com/x', ANY_PUBLIC, missing);
    expect([error.code, error.retryable]).toEqual(['INVALID_CALLBACK_URL', false]);
    const flaky = vi.fn(() => Promise.reject(Object.assign(new Error('timeout'), { code: 'EAI_AGAIN' })));
    const again = await refusal('https://hooks.example.com/x', ANY_PUBLIC, flaky);
    expect([again.code, again.retryable]).toEqual(['INVALID_CALLBACK_URL', true]);
  });

  it('refuses what is not an absolute http(s) URL', async () => {
    expect((await refusal('/relative')).code).toBe('INVALID_CALLBACK_URL');
    expect((await refusal('file:///etc/passwd')).code).toBe('SCHEME_NOT_ALLOWED');
    expect((await refusal('https://user:pw@hooks.example.com/')).code).toBe('CREDENTIALS_IN_URL');
  });

  it('says which schemes the server takes, and that a port past 65535 makes no URL', async () => {
    expect((await refusal('ftp://hooks.example.com/x')).message).toBe('callback_url must be an https URL, not ftp.');
    const withHttp: RemotePolicy = { ...ANY_PUBLIC, allowHttp: true };
    expect((await refusal('ftp://hooks.example.com/x', withHttp)).message).toBe(
      'callback_url must be an https or http URL, not ftp.',
    );
    const port = await refusal('https://hooks.example.com:99999/x');
    expect([port.code, port.message]).toEqual(['INVALID_CALLBACK_URL', expect.stringMatching(/port up to 65535/)]);
  });
});
