import type { RedisTarget } from '@reposcan/config';
import { Cluster } from 'ioredis';
import type { Redis } from 'ioredis';
import { connectRedis } from './redis-connections.js';

/**
 * Deletes every key under a BullMQ prefix (`<prefix>:*`): jobs, events, locks. For tests and
 * for retiring a deployment's queue; never run it on a prefix that live workers still use.
 * `redis` is a deployment, or the URL of a single server. On a cluster every master is scanned.
 */
export async function purgeQueuePrefix(redis: RedisTarget | string, prefix: string): Promise<number> {
  if (prefix === '') throw new RangeError('refusing to purge an empty prefix');
  const pattern = `${prefix.replace(/[*?[\]\\{}]/g, '\\$&')}:*`; // the prefix is literal, not a glob
  const target: RedisTarget = typeof redis === 'string' ? { kind: 'single', url: redis } : redis;
  const client = connectRedis(target, { maxRetriesPerRequest: 1, retryStrategy: () => null });
  client.on('error', () => {}); // the failing command rejects with the same error
  try {
    let nodes: Redis[];
    if (client instanceof Cluster) {
      await new Promise<void>((resolve, reject) => {
        client.once('ready', resolve);
        client.once('end', () => reject(new Error('the cluster could not be reached')));
      });
      nodes = client.nodes('master');
    } else nodes = [client];
    let deleted = 0;
    for (const node of nodes) {
      let cursor = '0';
      do {
        const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
        // One key at a time on a cluster: keys of one scan may hash to different slots.
        if (keys.length > 0)
          deleted +=
            client instanceof Cluster
              ? (await Promise.all(keys.map((key) => client.unlink(key)))).reduce((a, b) => a + b, 0)
              : await node.unlink(...keys);
        cursor = next;
      } while (cursor !== '0');
    }
    return deleted;
  } finally {
    client.disconnect();
  }
}
