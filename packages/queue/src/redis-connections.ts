import type { RedisTarget } from '@reposcan/config';
import { Cluster, Redis } from 'ioredis';
import type { RedisOptions } from 'ioredis';

// The one place that makes Redis clients: every connection of the service (queue, workers, state
// signals, worker announcements, rate limits, dashboard) comes from here, for a single server, a
// Redis Cluster or a master behind Sentinel alike.
//
// Producer and worker get different connections (BullMQ's production guide): the API must
// fail fast while Redis is down, a worker must wait it out and carry on when Redis is back.

/** A client of any deployment: commands, MULTI, scripts and pub/sub work the same on both. */
export type RedisClient = Redis | Cluster;

type ErrorReporter = (source: string, error: unknown) => void;

const PRODUCER_TIMEOUT_MS = 1_000;
const QUIT_TIMEOUT_MS = 1_000;

/** A client for `target` with per-connection `options`; the cluster's own retry follows `retryStrategy`. */
export function connectRedis(target: RedisTarget, options: RedisOptions): RedisClient {
  switch (target.kind) {
    case 'single':
      return new Redis(target.url, options);
    case 'sentinel':
      return new Redis({
        ...options,
        sentinels: target.sentinels.map(({ host, port }) => ({ host, port })),
        name: target.name,
        ...(target.password === undefined ? {} : { password: target.password }),
        // Not ioredis's failoverDetector: its disconnect, landing while the client asks the sentinels
        // for the master, ends the client for good. A dead master closes the connection anyway, and a
        // demoted one answers READONLY: both reconnect, and the sentinels name the new master.
        reconnectOnError: (error) => error.message.startsWith('READONLY'),
        sentinelRetryStrategy: (times) => Math.min(times * 200, 2_000),
      });
    case 'cluster': {
      const { enableOfflineQueue, retryStrategy, ...perNode } = options;
      return new Cluster(
        target.nodes.map(({ host, port }) => ({ host, port })),
        {
          redisOptions: { ...perNode, ...(target.password === undefined ? {} : { password: target.password }) },
          ...(enableOfflineQueue === undefined ? {} : { enableOfflineQueue }),
          clusterRetryStrategy: (times) => retryStrategy?.(times) ?? null,
          // A failover moves slots: ask again soon rather than fail the command.
          retryDelayOnFailover: 200,
          retryDelayOnClusterDown: 200,
          retryDelayOnTryAgain: 200,
        },
      );
    }
  }
}

/** API side: commands are refused while disconnected (no offline queue) and time out when Redis hangs. */
export function createProducerConnection(target: RedisTarget, report: ErrorReporter): RedisClient {
  const client = connectRedis(target, {
    enableOfflineQueue: false,
    connectTimeout: PRODUCER_TIMEOUT_MS,
    commandTimeout: PRODUCER_TIMEOUT_MS,
    maxRetriesPerRequest: 1,
    retryStrategy: (times) => Math.min(times * 200, 2_000),
  });
  client.on('error', (error) => report('producer connection', error));
  return client;
}

/** A client that waits through an outage: commands queue, it reconnects forever (and resubscribes). */
function reconnectingConnection(target: RedisTarget, report: ErrorReporter, source: string): RedisClient {
  const client = connectRedis(target, {
    maxRetriesPerRequest: null,
    retryStrategy: (times) => Math.min(times * 500, 5_000),
  });
  client.on('error', (error) => report(source, error));
  return client;
}

/**
 * Worker side: commands wait through an outage and the client reconnects forever. No command
 * timeout: BullMQ duplicates this connection for its blocking fetch, which must not time out,
 * and it requires `maxRetriesPerRequest: null` there.
 */
export function createWorkerConnection(target: RedisTarget, report: ErrorReporter): RedisClient {
  return reconnectingConnection(target, report, 'worker connection');
}

/** Pub/sub side (state signals): SUBSCRIBE waits for the connection, and is sent again after each reconnect. */
export function createSubscriberConnection(target: RedisTarget, report: ErrorReporter): RedisClient {
  return reconnectingConnection(target, report, 'state signal subscriber');
}

/** Worker announcements: written whenever Redis is there (commands wait through an outage); readers bound their own wait. */
export function createAnnouncementConnection(target: RedisTarget, report: ErrorReporter): RedisClient {
  return reconnectingConnection(target, report, 'worker announcements');
}

/** QUIT when connected, so replies in flight arrive; otherwise drop the socket, as QUIT would wait for a reconnect. */
export async function closeConnection(client: RedisClient): Promise<void> {
  if (client.status === 'end') return;
  if (client.status === 'ready') {
    let timer: NodeJS.Timeout | undefined;
    const quitInTime = await Promise.race([
      client.quit().then(
        () => true,
        () => false,
      ),
      new Promise<false>((resolve) => (timer = setTimeout(resolve, QUIT_TIMEOUT_MS, false))),
    ]);
    clearTimeout(timer);
    if (quitInTime) return;
  }
  client.disconnect();
}
