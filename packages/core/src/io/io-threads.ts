// The engine's file-system work off the event loop, with blocking calls on threads of its own
// (io-thread.ts). Blocking calls cost a fraction of the async ones (no promise, FileHandle or libuv
// round trip per call: 8 900 reads took 0.12 s instead of 0.9 s), and the event loop that serves
// HTTP and renews queue locks never waits on a disk.
//
// Reads go to one long-lived thread: a batch takes about a millisecond. Each walk gets a thread of
// its own that ends with it: a walk of a big tree takes a second (it must not hold up another
// scan's reads) and leaves tens of megabytes of garbage that a thread kept alive would hold on to
// (50 000 files: 74 MB RSS in a kept thread). Threads keep the process alive only while they work.
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

interface Pending {
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
}

interface IoThread {
  worker: Worker;
  pending: Map<number, Pending>;
  failure: Error | null;
}

/** The read thread, while it lives. */
let reader: IoThread | null = null;
let nextId = 1;

function rebuild(error: { name: string; message: string; code?: string }): Error {
  if (error.name === 'ScanRootError' && error.code) return new ScanRootError(error.code as ScanRootErrorCode, error.message);
  return Object.assign(new Error(error.message), { name: error.name, ...(error.code ? { code: error.code } : {}) });
}

function spawn(onExit: (thread: IoThread) => void): IoThread {
  const worker = new Worker(THREAD_URL, { execArgv: FROM_SOURCE ? ['--conditions=source'] : [], resourceLimits: { maxYoungGenerationSizeMb: 4 } });
  const thread: IoThread = { worker, pending: new Map(), failure: null };
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
    onExit(thread);
    const error = new Error(`An io thread exited with code ${code}`, { cause: thread.failure ?? undefined });
    for (const pending of thread.pending.values()) pending.reject(error);
    thread.pending.clear();
  });
  worker.unref();
  return thread;
}

function ask<T>(thread: IoThread, request: IoRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never): Promise<T> {
  const id = nextId++;
  return new Promise<T>((resolve, reject) => {
    thread.pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
    thread.worker.ref();
    thread.worker.postMessage({ ...request, id });
  });
}

/** `walkTree` on a thread of its own, which ends with the walk. A filter function cannot cross threads: use `docsOnly`. */
export function walkInThread(input: WalkInput): Promise<WalkResult> {
  if (input.acceptFile !== undefined) return Promise.reject(new TypeError('walkInThread takes no acceptFile function; set docsOnly instead'));
  const thread = spawn(() => {});
  return ask<WalkResult>(thread, { kind: 'walk', input }).finally(() => {
    void thread.worker.terminate();
  });
}

/** A batch of reads on the read thread, into the shared memory of each request's `into`. */
export function readFilesInThread(requests: readonly ReadRequest[], maxBytes: number): Promise<ReadOutcome[]> {
  reader ??= spawn((gone) => {
    if (reader === gone) reader = null;
  });
  return ask<ReadOutcome[]>(reader, { kind: 'read', requests: [...requests], maxBytes });
}
