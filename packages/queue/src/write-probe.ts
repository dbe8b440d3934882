import type { NotReadyReason } from '@reposcan/contracts';

/**
 * What an enqueue does, in small: a script that writes one key of the queue's keyspace (expiring
 * at once) and reads another, as BullMQ's scripts write and read several keys of one queue. A
 * Redis that would refuse an enqueue refuses this the same way: a read-only replica, maxmemory
 * reached under noeviction, a cluster where the queue's keys hash to different slots.
 */
export const WRITE_PROBE_SCRIPT = "redis.call('SET', KEYS[1], '1', 'PX', ARGV[1]) return redis.call('EXISTS', KEYS[2])";
export const WRITE_PROBE_TTL_MS = 5_000;

/** The keys the probe touches: `<prefix>:<queue>:…`, so the same slot as the queue's own. */
export function writeProbeKeys(prefix: string, queueName: string): [string, string] {
  return [`${prefix}:${queueName}:ready-probe`, `${prefix}:${queueName}:meta`];
}

/** The first word of a Redis error reply (READONLY, OOM, CROSSSLOT, …), which says what it is. */
function replyCode(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return /^[A-Z]+/.exec(text)?.[0] ?? '';
}

function firstLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.split('\n')[0]?.slice(0, 200) ?? '';
}

/** Why a failed write probe means no scan can be enqueued now, with what an operator can do about it. */
export function writeFailureReason(error: unknown): NotReadyReason {
  const text = error instanceof Error ? error.message : String(error);
  switch (replyCode(error)) {
    case 'READONLY':
      return {
        code: 'REDIS_READ_ONLY',
        message:
          'Redis refuses writes: it is a read-only replica. Point REDIS_URL at the master, or list the sentinels in REDIS_SENTINELS so the service follows whichever server is master.',
      };
    case 'OOM':
      return {
        code: 'REDIS_OUT_OF_MEMORY',
        message:
          'Redis refuses writes: it has reached maxmemory and its policy evicts nothing (noeviction, as the queue needs). Raise maxmemory or free memory in Redis.',
      };
    case 'CROSSSLOT':
      return {
        code: 'REDIS_CROSSSLOT',
        message:
          "Redis Cluster refuses the queue's scripts: the queue's keys hash to different slots. The queue prefix needs a hash tag such as {reposcan}, which REDIS_CLUSTER_NODES sets by itself.",
      };
    case 'MOVED':
    case 'ASK':
      return {
        code: 'REDIS_WRONG_SERVER',
        message:
          "REDIS_URL points at one node of a Redis Cluster, which holds only some of the cluster's keys: list the cluster's nodes in REDIS_CLUSTER_NODES instead.",
      };
    case 'NOAUTH':
    case 'WRONGPASS':
    case 'NOPERM':
      return {
        code: 'REDIS_AUTH_FAILED',
        message: `Redis refuses this client (${replyCode(error)}): check the user and password in REDIS_URL or REDIS_PASSWORD, and the user's ACL.`,
      };
    default:
      if (/cluster support disabled/i.test(text))
        return {
          code: 'REDIS_WRONG_SERVER',
          message: 'REDIS_CLUSTER_NODES points at a Redis that is not a cluster: use REDIS_URL for a single server.',
        };
      if (/unknown command/i.test(text))
        return {
          code: 'REDIS_WRONG_SERVER',
          message: `The server at the Redis address does not run Lua scripts, which the queue needs: it is not Redis, or a proxy that does not pass them on (${firstLine(error)}).`,
        };
      return { code: 'REDIS_WRITE_FAILED', message: `Redis refused a write to the queue: ${firstLine(error)}` };
  }
}

export function unreachableReason(detail: string): NotReadyReason {
  return {
    code: 'REDIS_UNREACHABLE',
    message: `Redis does not answer (${detail}): no scan can be queued until it does.`,
  };
}
