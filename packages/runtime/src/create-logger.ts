import { pino } from 'pino';
import type { Logger } from 'pino';

export type { Logger };

/** Structured JSON logs; file names and URLs from users never reach a log line unescaped (pino JSON-encodes). */
export function createLogger(level: string, name: string): Logger {
  return pino({ name, level, base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime });
}
