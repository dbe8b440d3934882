import { Redis } from 'ioredis';

/**
 * Deletes every key under a BullMQ prefix (`<prefix>:*`): jobs, events, locks. For tests and
 * for retiring a deployment's queue; never run it on a prefix that live workers still use.
 */
export async function purgeQueuePrefix(redisUrl: string, prefix: string): Promise<number> {
  if (prefix === '') throw new RangeError('refusing to purge an empty prefix');
  const pattern = `${prefix.replace(/[*?[\]\\]/g, '\\$&')}:*`; // the prefix is literal, not a glob
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1, retryStrategy: () => null });
  redis.on('error', () => {}); // the failing command rejects with the same error
  try {
    let deleted = 0;
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      if (keys.length > 0) deleted += await redis.unlink(...keys);
      cursor = next;
    } while (cursor !== '0');
    return deleted;
  } finally {
    redis.disconnect();
  }
}
