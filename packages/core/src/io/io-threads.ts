// The engine's file-system work off the event loop: a small process-wide pool of threads that
// walk trees and read batches of files with blocking calls (io-thread.ts). Blocking calls cost a
// fraction of the async ones (no promise, FileHandle or libuv round trip per call: 8 900 reads
// took 0.12 s instead of 0.9 s), and the event loop that serves HTTP and renews queue locks never
// waits on a disk. Threads start on first use and keep the process alive only while they work.
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { WalkResult } from '../types.js';
import { ScanRootError } from '../walk/scan-root.js';
import type { ScanRootErrorCode } from '../walk/scan-root.js';
import type { WalkInput } from '../walk/walk-tree.js';
import type { IoReply, IoRequest } from './io-protocol.js';
import type { ReadOutcome, ReadRequest } from './read-file-bytes.js';

// From TypeScript sources (tests) the thread needs the tsx loader; from dist it is plain JavaScript.
const FROM_SOURCE = import.meta.url.endsWith('.ts');
const THREAD_URL = new URL(FROM_SOURCE ? './io-thread.dev.mjs' : './io-thread.js', import.meta.url);
/**
 * A batch of reads takes about a millisecond, so one thread serves every scan's reads; a second
 * starts only while the first is walking (a walk of a big tree takes a second), so another scan's
 * reads never wait for it. Each thread is a V8 isolate of its own: a few megabytes, kept only if used.
 */
const MAX_THREADS = Math.min(2, availableParallelism());

interface Pending {
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
}

interface IoThread {
  worker: Worker;
  pending: Map<number, Pending>;
  /** Walks among its pending requests. */
  walks: number;
  failure: Error | null;
}

const threads: IoThread[] = [];
let nextId = 1;

function rebuild(error: { name: string; message: string; code?: string }): Error {
  if (error.name === 'ScanRootError' && error.code) return new ScanRootError(error.code as ScanRootErrorCode, error.message);
  return Object.assign(new Error(error.message), { name: error.name, ...(error.code ? { code: error.code } : {}) });
}

function spawn(): IoThread {
  const worker = new Worker(THREAD_URL, { execArgv: FROM_SOURCE ? ['--conditions=source'] : [], resourceLimits: { maxYoungGenerationSizeMb: 4 } });
  const thread: IoThread = { worker, pending: new Map(), walks: 0, failure: null };
  worker.on('message', (reply: IoReply) => {
    const pending = thread.pending.get(reply.id);
    thread.pending.delete(reply.id);
    if (thread.pending.size === 0) worker.unref();
    if (reply.ok) pending?.resolve(reply.value);
    else pending?.reject(rebuild(reply.error));
  });
  worker.on('error', (error) => {
    thread.failure = error;
  });
  worker.on('exit', (code) => {
    threads.splice(threads.indexOf(thread), 1);
    const error = new Error(`An io thread exited with code ${code}`, { cause: thread.failure ?? undefined });
    for (const pending of thread.pending.values()) pending.reject(error);
    thread.pending.clear();
  });
  worker.unref();
  threads.push(thread);
  return thread;
}

/** An idle thread; else one that is not walking; else a new one while below the limit; else the least busy. */
function pick(): IoThread {
  const idle = threads.find((t) => t.pending.size === 0);
  if (idle) return idle;
  const free = threads.filter((t) => t.walks === 0);
  if (free.length > 0) return free.reduce((a, b) => (b.pending.size < a.pending.size ? b : a));
  if (threads.length < MAX_THREADS) return spawn();
  return threads.reduce((a, b) => (b.pending.size < a.pending.size ? b : a));
}

function ask<T>(request: IoRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never): Promise<T> {
  const thread = pick();
  const id = nextId++;
  const walk = request.kind === 'walk' ? 1 : 0;
  thread.walks += walk;
  return new Promise<T>((resolve, reject) => {
    thread.pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
    thread.worker.ref();
    thread.worker.postMessage({ ...request, id });
  }).finally(() => {
    thread.walks -= walk;
  });
}

/** `walkTree` on an io thread. A filter function cannot cross threads: use `docsOnly`. */
export function walkInThread(input: WalkInput): Promise<WalkResult> {
  if (input.acceptFile !== undefined) return Promise.reject(new TypeError('walkInThread takes no acceptFile function; set docsOnly instead'));
  return ask<WalkResult>({ kind: 'walk', input });
}

/** A batch of reads on an io thread, into the shared memory of each request's `into`. */
export function readFilesInThread(requests: readonly ReadRequest[], maxBytes: number): Promise<ReadOutcome[]> {
  return ask<ReadOutcome[]>({ kind: 'read', requests: [...requests], maxBytes });
}
