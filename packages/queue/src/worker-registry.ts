import type { RedisTarget } from '@reposcan/config';
import { closeConnection, createAnnouncementConnection } from './redis-connections.js';
import type { RedisClient } from './redis-connections.js';

/** What a worker tells the others about itself: plain JSON (its source policy). */
export type WorkerAnnouncement = Record<string, unknown>;

export interface WorkerRegistry {
  /**
   * Announces `info` as one live worker's until the returned stop(): refreshed every third of
   * `ttlMs`, forgotten `ttlMs` after the last refresh, so a killed worker drops out by itself.
   */
  announce(info: WorkerAnnouncement, ttlMs?: number): { stop(): Promise<void> };
  /**
   * What every live worker announced; empty when none did, or when the store cannot be read (the
   * first call connects: call it once at start so the first request finds the connection ready).
   */
  live(): Promise<WorkerAnnouncement[]>;
  close(): Promise<void>;
}

export const WORKER_ANNOUNCE_TTL_MS = 30_000;
const LIVE_READ_DEADLINE_MS = 300;

/** In one process (the embedded mode): the workers started here. */
export function createMemoryWorkerRegistry(): WorkerRegistry {
  const announced = new Set<WorkerAnnouncement>();
  return {
    announce(info) {
      announced.add(info);
      return { stop: () => Promise.resolve(void announced.delete(info)) };
    },
    live: () => Promise.resolve([...announced]),
    close: () => Promise.resolve(),
  };
}

/**
 * On Redis: each worker's announcement is a key of its own that expires (`<prefix>:worker:<id>`),
 * listed in a set (`<prefix>:workers`) so that reading them needs no scan of the keyspace; ids
 * whose key has expired are dropped from the set by the reader.
 */
export function createRedisWorkerRegistry(o: {
  redis: RedisTarget;
  prefix: string;
  report: (source: string, error: unknown) => void;
}): WorkerRegistry {
  let connection: RedisClient | null = null;
  const redis = (): RedisClient => (connection ??= createAnnouncementConnection(o.redis, o.report));
  const setKey = `${o.prefix}:workers`;
  const keyOf = (id: string): string => `${o.prefix}:worker:${id}`;
  return {
    announce(info, ttlMs = WORKER_ANNOUNCE_TTL_MS) {
      const id = crypto.randomUUID();
      const value = JSON.stringify(info);
      const write = (): void => {
        redis()
          .multi()
          .set(keyOf(id), value, 'PX', ttlMs)
          .sadd(setKey, id)
          .exec()
          // Not expected (commands wait for Redis); the next refresh writes it again, and a key
          // that expires meanwhile only means the API skips its check.
          .catch((error: unknown) => o.report('worker announcement', error));
      };
      write();
      const timer = setInterval(write, Math.max(1_000, Math.floor(ttlMs / 3)));
      timer.unref();
      return {
        async stop() {
          clearInterval(timer);
          await redis()
            .multi()
            .del(keyOf(id))
            .srem(setKey, id)
            .exec()
            .catch(() => {});
        },
      };
    },
    async live() {
      const read = async (): Promise<WorkerAnnouncement[]> => {
        const ids = await redis().smembers(setKey);
        if (ids.length === 0) return [];
        const values = await redis().mget(ids.map(keyOf));
        const gone = ids.filter((_, i) => values[i] === null);
        if (gone.length > 0) await redis().srem(setKey, ...gone);
        return values.flatMap((value) => (value === null ? [] : [JSON.parse(value) as WorkerAnnouncement]));
      };
      // A request waits on this: Redis down reads as "no worker known" at once (the enqueue
      // that follows answers QUEUE_UNAVAILABLE), a slow one within LIVE_READ_DEADLINE_MS.
      if (redis().status !== 'ready') return [];
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<WorkerAnnouncement[]>(
        (resolve) => (timer = setTimeout(resolve, LIVE_READ_DEADLINE_MS, [])),
      );
      try {
        return await Promise.race([read().catch(() => []), timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
    async close() {
      if (connection) await closeConnection(connection);
    },
  };
}
