// Plain JavaScript so the tokenizer's worker entry (count-tokens.worker.js, run as is from src/ and
// dist/) can import it as well as the TypeScript threads.
import os from 'node:os';

/** Background threads run at this nice value. */
export const BACKGROUND_NICE = 19;

/**
 * Lowers the calling thread's CPU priority. On Linux a thread's nice value is its own and threads
 * it starts inherit it, so an event loop in the same process (HTTP, BullMQ lock renewal) gets the
 * CPU first when both want it. Raising a nice value needs no privilege; returns false where the
 * platform refuses (the work then runs at normal priority).
 * @param {number} [nice]
 * @returns {boolean}
 */
export function lowerThreadPriority(nice = BACKGROUND_NICE) {
  try {
    if (os.getPriority() < nice) os.setPriority(nice);
    return true;
  } catch {
    return false;
  }
}
