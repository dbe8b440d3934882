import { randomBytes, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBullMqTransport, createMemoryTransport, openSealed, sealSecret } from '../src/index.js';
import type { QueueTransport } from '../src/index.js';
import { sleep } from './support/async.js';
import { REDIS_URL, uniquePrefix } from './support/redis.js';

const KEY = randomBytes(32);
const SECRET = `me:tok-${randomUUID()}`;

describe('sealing a credential (AES-256-GCM, bound to its scan id)', () => {
  it('opens what it sealed, with a fresh nonce each time', () => {
    const scanId = randomUUID();
    const a = sealSecret(KEY, scanId, SECRET);
    const b = sealSecret(KEY, scanId, SECRET);
    expect(a).not.toBe(b);
    expect(openSealed(KEY, scanId, a)).toBe(SECRET);
    expect(a).not.toContain(SECRET);
    expect(a).not.toContain(Buffer.from(SECRET).toString('base64'));
  });

  it('refuses a changed byte, another scan id, another key or a truncated tag with REPO_AUTH_FAILED', () => {
    const scanId = randomUUID();
    const sealed = sealSecret(KEY, scanId, SECRET);
    const [version, iv, tag, ciphertext] = sealed.split('.') as [string, string, string, string];
    const flipped = Buffer.from(ciphertext, 'base64');
    flipped[0] = (flipped[0] as number) ^ 1;
    const tampered = [
      [version, iv, tag, flipped.toString('base64')].join('.'),
      [version, iv, Buffer.from(tag, 'base64').subarray(0, 8).toString('base64'), ciphertext].join('.'),
      [version, randomBytes(12).toString('base64'), tag, ciphertext].join('.'),
      ['v0', iv, tag, ciphertext].join('.'),
      'not sealed at all',
    ];
    for (const value of tampered)
      expect(() => openSealed(KEY, scanId, value)).toThrow(expect.objectContaining({ code: 'REPO_AUTH_FAILED' }));
    expect(() => openSealed(KEY, randomUUID(), sealed)).toThrow(expect.objectContaining({ code: 'REPO_AUTH_FAILED' }));
    expect(() => openSealed(randomBytes(32), scanId, sealed)).toThrow(
      expect.objectContaining({ code: 'REPO_AUTH_FAILED', message: expect.stringContaining('CREDENTIALS_KEY') }),
    );
  });
});

describe('the credential vault of each transport', () => {
  let redis: Redis;
  const prefix = uniquePrefix('vault');
  let sealed: QueueTransport;
  let keyless: QueueTransport;
  let memory: QueueTransport;

  beforeAll(() => {
    redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    const base = { redis: { kind: 'single' as const, url: REDIS_URL }, prefix, maxWaiting: 10, attempts: 1 };
    sealed = createBullMqTransport({ ...base, credentialsKey: KEY.toString('hex') });
    keyless = createBullMqTransport({ ...base, credentialsKey: null });
    memory = createMemoryTransport({ maxWaiting: 10, attempts: 1 });
  });

  afterAll(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
    await Promise.all([sealed.close(), keyless.close(), memory.close()]);
  });

  it('Redis holds ciphertext only, under the prefix, with the TTL as its expiry; get, then delete', async () => {
    const scanId = randomUUID();
    await sealed.credentials.put(scanId, SECRET, 60_000);
    const key = `${prefix}:git-credential:${scanId}`;
    const stored = await redis.get(key);
    expect(stored).toMatch(/^v1\./);
    expect(stored).not.toContain(SECRET);
    expect(await redis.pttl(key)).toBeGreaterThan(55_000);
    expect(await sealed.credentials.get(scanId)).toBe(SECRET);
    await sealed.credentials.delete(scanId);
    expect(await redis.exists(key)).toBe(0);
    expect(await sealed.credentials.get(scanId)).toBeNull();
  });

  it('an expired credential reads as none', async () => {
    const scanId = randomUUID();
    await sealed.credentials.put(scanId, SECRET, 50);
    await memory.credentials.put(scanId, SECRET, 50);
    await sleep(150);
    expect(await sealed.credentials.get(scanId)).toBeNull();
    expect(await memory.credentials.get(scanId)).toBeNull();
  });

  it('without CREDENTIALS_KEY nothing is stored: CREDENTIALS_KEY_MISSING names the variable', async () => {
    const scanId = randomUUID();
    await expect(keyless.credentials.put(scanId, SECRET, 60_000)).rejects.toMatchObject({
      code: 'CREDENTIALS_KEY_MISSING',
      message: expect.stringContaining('CREDENTIALS_KEY'),
    });
    expect(await redis.exists(`${prefix}:git-credential:${scanId}`)).toBe(0);
    // A worker without the key cannot read what an API with it sealed.
    await sealed.credentials.put(scanId, SECRET, 60_000);
    await expect(keyless.credentials.get(scanId)).rejects.toMatchObject({ code: 'REPO_AUTH_FAILED' });
  });

  it('embedded: kept in memory, no key needed', async () => {
    const scanId = randomUUID();
    await memory.credentials.put(scanId, SECRET, 60_000);
    expect(await memory.credentials.get(scanId)).toBe(SECRET);
    await memory.credentials.delete(scanId);
    expect(await memory.credentials.get(scanId)).toBeNull();
  });
});
