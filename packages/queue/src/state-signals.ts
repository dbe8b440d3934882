import type { RedisTarget } from '@reposcan/config';
import { SCAN_QUEUE_NAME } from './job-contract.js';
import { closeConnection, createProducerConnection, createSubscriberConnection } from './redis-connections.js';
import type { RedisClient } from './redis-connections.js';

// Word that a scan's state.json was rewritten, from the process that wrote it to every process
// waiting on it (a POST that waits for its result, an event stream). The volume stays the
// source of truth: a signal only says "read it again now", and a lost one costs a waiter no more
// than its fallback poll. Without signals a waiting POST read state.json every 150 ms, so even a
// 40 ms scan answered after 150 ms.

export interface StateSignals {
  /** Says that `scanId`'s state changed. Best effort: never throws and never waits. */
  announce(scanId: string): void;
  /** Calls `onChange` on every announcement for `scanId`, from any process, until the returned function is called. */
  listen(scanId: string, onChange: () => void): () => void;
  /** Starts hearing announcements now rather than at the first `listen` (an API does, so its first waiter misses none). */
  startListening(): void;
  close(): Promise<void>;
}

/** Listeners of this process, by scan id. */
class LocalListeners {
  private readonly byScan = new Map<string, Set<() => void>>();

  add(scanId: string, onChange: () => void): () => void {
    let set = this.byScan.get(scanId);
    if (!set) this.byScan.set(scanId, (set = new Set()));
    // A wrapper of its own: the same function listening twice is two listeners.
    const listener = (): void => onChange();
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.byScan.get(scanId) === set) this.byScan.delete(scanId);
    };
  }

  fire(scanId: string): void {
    const set = this.byScan.get(scanId);
    if (set) for (const listener of [...set]) listener();
  }
}

/** Signals within one process: the embedded mode, where the API and the worker share an event loop. */
export function createLocalStateSignals(): StateSignals {
  const local = new LocalListeners();
  return {
    announce: (scanId) => local.fire(scanId),
    listen: (scanId, onChange) => local.add(scanId, onChange),
    startListening: () => {},
    close: () => Promise.resolve(),
  };
}

export interface RedisStateSignalsOptions {
  redis: RedisTarget;
  /** The queue's key prefix: deployments sharing one Redis do not hear each other. */
  prefix?: string;
  report: (source: string, error: unknown) => void;
}

/**
 * Signals over Redis pub/sub, one channel per queue prefix carrying scan ids. The publishing
 * connection opens at once (opened on first use, it refused that first announcement: it does not
 * queue commands while it connects); the subscribing one on first use: a worker only publishes, an
 * API subscribes when it starts (startListening).
 */
export function createRedisStateSignals(o: RedisStateSignalsOptions): StateSignals {
  const channel = `${o.prefix ?? 'bull'}:${SCAN_QUEUE_NAME}:state-changed`;
  const local = new LocalListeners();
  const publisher = createProducerConnection(o.redis, o.report);
  let subscriber: RedisClient | null = null;
  let closed = false;

  const subscribe = (): void => {
    if (subscriber || closed) return;
    // Messages sent while it is away are lost; the waiters' poll covers them.
    const client = createSubscriberConnection(o.redis, o.report);
    client.on('message', (_channel: string, scanId: string) => local.fire(scanId));
    client.subscribe(channel).catch((error: unknown) => o.report('state signal subscriber', error));
    subscriber = client;
  };

  return {
    announce(scanId) {
      // This process's own listeners need no round trip (ROLE=all runs the API and a worker).
      local.fire(scanId);
      if (closed) return;
      // Refused at once while Redis is down (no offline queue): waiters fall back to polling.
      publisher.publish(channel, scanId).catch(() => undefined);
    },
    listen(scanId, onChange) {
      subscribe();
      return local.add(scanId, onChange);
    },
    startListening: subscribe,
    async close() {
      closed = true;
      await Promise.all([publisher, ...(subscriber ? [subscriber] : [])].map((client) => closeConnection(client)));
    },
  };
}
