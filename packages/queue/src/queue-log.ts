/** Where the transports report what they cannot throw: connection errors, stalls, failed callbacks. */
export type QueueLog = (level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void;

export const consoleLog: QueueLog = (level, message, fields) => {
  const line = JSON.stringify({ level, msg: message, ...fields, time: new Date().toISOString() });
  if (level === 'info') console.log(line);
  else console.error(line);
};

const REPEAT_WINDOW_MS = 60_000;

/**
 * Logs an error once per source and message per minute. While Redis is down, ioredis and every
 * BullMQ object built on it emit the same error on each reconnect attempt; one line is enough.
 */
export function createErrorReporter(log: QueueLog): (source: string, error: unknown) => void {
  const lastLogged = new Map<string, number>();
  return (source, error) => {
    const message = error instanceof Error ? error.message : String(error);
    const key = `${source}\u0000${message}`;
    const now = Date.now();
    if (now - (lastLogged.get(key) ?? -Infinity) < REPEAT_WINDOW_MS) return;
    if (lastLogged.size >= 100) lastLogged.clear(); // bounded: sources × distinct messages
    lastLogged.set(key, now);
    log('error', `queue ${source} error: ${message}`, { source });
  };
}
