import { Redis } from 'ioredis';

// Producer and worker get different connections (BullMQ's production guide): the API must
// fail fast while Redis is down, a worker must wait it out and carry on when Redis is back.

type ErrorReporter = (source: string, error: unknown) => void;

const PRODUCER_TIMEOUT_MS = 1_000;
const QUIT_TIMEOUT_MS = 1_000;

/** API side: commands are refused while disconnected (no offline queue) and time out when Redis hangs. */
export function createProducerConnection(url: string, report: ErrorReporter): Redis {
  const client = new Redis(url, {
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
function reconnectingConnection(url: string, report: ErrorReporter, source: string): Redis {
  const client = new Redis(url, {
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
export function createWorkerConnection(url: string, report: ErrorReporter): Redis {
  return reconnectingConnection(url, report, 'worker connection');
}

/** Pub/sub side (state signals): SUBSCRIBE waits for the connection, and is sent again after each reconnect. */
export function createSubscriberConnection(url: string, report: ErrorReporter): Redis {
  return reconnectingConnection(url, report, 'state signal subscriber');
}

/** Worker announcements: written whenever Redis is there (commands wait through an outage); readers bound their own wait. */
export function createAnnouncementConnection(url: string, report: ErrorReporter): Redis {
  return reconnectingConnection(url, report, 'worker announcements');
}

/** QUIT when connected, so replies in flight arrive; otherwise drop the socket, as QUIT would wait for a reconnect. */
export async function closeConnection(client: Redis): Promise<void> {
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
