import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, expect, it } from 'vitest';
import { purgeQueuePrefix } from '../src/index.js';
import { REDIS_URL } from './support/redis.js';

const redis = new Redis(REDIS_URL);
const base = `test-reposcan-queue-purge-${randomUUID()}`;

afterAll(async () => {
  await purgeQueuePrefix(REDIS_URL, `${base}-a*b`);
  await purgeQueuePrefix(REDIS_URL, `${base}-aXb`);
  redis.disconnect();
});

it('deletes the keys under a prefix, read literally, and nothing else', async () => {
  await redis.mset(
    `${base}-a*b:scans:1`,
    '1',
    `${base}-a*b:scans:meta`,
    '1',
    `${base}-aXb:scans:1`,
    '1',
    `${base}-a*b`,
    '1',
  );
  expect(await purgeQueuePrefix(REDIS_URL, `${base}-a*b`)).toBe(2);
  expect(await redis.exists(`${base}-aXb:scans:1`, `${base}-a*b`)).toBe(2);
  await redis.del(`${base}-a*b`);
  await expect(purgeQueuePrefix(REDIS_URL, '')).rejects.toThrow(RangeError);
});
