/** One Redis server or sentinel: `host:port`. */
export interface RedisNode {
  readonly host: string;
  readonly port: number;
}

/**
 * Where the queue's Redis is, in the one shape each deployment takes: a single server (its URL
 * carries password, database and TLS), a Redis Cluster (any of its nodes; the client learns the
 * rest), or a master found through Redis Sentinel.
 */
export type RedisTarget =
  | { readonly kind: 'single'; readonly url: string }
  | { readonly kind: 'cluster'; readonly nodes: readonly RedisNode[]; readonly password?: string }
  | {
      readonly kind: 'sentinel';
      readonly sentinels: readonly RedisNode[];
      readonly name: string;
      readonly password?: string;
    };

/**
 * True when Redis Cluster hashes every key starting with `prefix` by the same text: the first
 * `{` is followed, later, by a `}` with something between them (`{reposcan}`). BullMQ runs a
 * script over several keys of one queue, which a cluster refuses (CROSSSLOT) unless they share
 * a slot.
 */
export function hasHashTag(prefix: string): boolean {
  const open = prefix.indexOf('{');
  return open >= 0 && prefix.indexOf('}', open + 1) > open + 1;
}

/** Human-readable, without a password: where the queue's Redis is. */
export function describeRedisTarget(target: RedisTarget): string {
  switch (target.kind) {
    case 'single':
      return target.url.replace(/\/\/([^/@]*):[^/@]*@/, '//$1:***@');
    case 'cluster':
      return `cluster ${target.nodes.map((n) => `${n.host}:${n.port}`).join(',')}`;
    case 'sentinel':
      return `master ${target.name} via sentinels ${target.sentinels.map((n) => `${n.host}:${n.port}`).join(',')}`;
  }
}
