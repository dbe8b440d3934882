// Imports nothing of the engine, so every thread entry (the lean file threads included) can load it.
import { readdirSync } from 'node:fs';
import os from 'node:os';

/** Background threads run at this nice value. */
export const BACKGROUND_NICE = 19;

/**
 * Lowers the calling thread's CPU priority. On Linux a thread's nice value is its own and threads
 * it starts inherit it, so an event loop in the same process (HTTP, BullMQ lock renewal) gets the
 * CPU first when both want it. Raising a nice value needs no privilege; returns false where the
 * platform refuses (the work then runs at normal priority).
 */
export function lowerThreadPriority(nice: number = BACKGROUND_NICE): boolean {
  try {
    lowerTo(0, nice);
    return true;
  } catch {
    return false;
  }
}

/** Lowers one thread (0: the calling one) to `nice`, never raising it; throws where refused. */
function lowerTo(tid: number, nice: number): void {
  if (os.getPriority(tid) < nice) os.setPriority(tid, nice);
}

/**
 * Lowers the CPU priority of every thread of this process, for a process that only does batch work
 * (a worker). `lowerThreadPriority` reaches only the calling thread and the threads it starts later;
 * the threads Node starts at boot (V8's helpers, which collect garbage and compile for every
 * isolate, and libuv's pool, which runs the file writes and syncs) kept normal priority and took
 * 1.4–1.7 CPU-seconds of a worker's 8 in a 25 s load run away from the API beside it. Linux lists
 * them in /proc/self/task; elsewhere a process has one nice value and the calling thread's is it.
 * Returns false if the calling thread's priority could not be lowered.
 */
export function lowerProcessPriority(nice: number): boolean {
  if (!lowerThreadPriority(nice)) return false;
  let threads: string[];
  try {
    threads = readdirSync('/proc/self/task');
  } catch {
    return true;
  }
  for (const tid of threads) {
    try {
      lowerTo(Number(tid), nice);
    } catch {
      // The thread ended meanwhile, or the platform refuses: it keeps its priority.
    }
  }
  return true;
}
