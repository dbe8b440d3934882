// The engine's file-system work off the event loop, with blocking calls on threads of its own
// (file-thread.ts, walk-thread.ts). Blocking calls cost a fraction of the async ones (no promise,
// FileHandle or libuv round trip per call: 8 900 reads took 0.12 s instead of 0.9 s), and the
// event loop that serves HTTP and renews queue locks never waits on a disk. (Artifacts are written
// from the event loop in 1 MiB async writes: a few hundred a scan, where reads are thousands.)
//
// Reads (a batch takes about a millisecond) and a preview's token estimates go to two long-lived
// threads with a lean entry: a kept thread costs about 10 MB. A walk of a big tree gets a thread
// that ends with it: it takes a second and leaves tens of megabytes of garbage that a kept thread
// would hold on to (50 000 files: 74 MB RSS). A small walk's thread, with little garbage, waits
// for the next walk. A long-lived process can have the next walk's thread started while it is
// idle (prepareWalkThread): starting one took ~0.1 s at the head of every scan, while nothing else
// could run. Threads keep the process alive only while they work.
import { Worker } from 'node:worker_threads';
import type { SkippedPath, WalkedFile } from '../types.js';
import { ScanRootError } from '../walk/scan-root.js';
import type { ScanRootErrorCode } from '../walk/scan-root.js';
import { WalkTimeoutError } from '../walk/walk-tree.js';
import type { WalkInput, WalkSink } from '../walk/walk-tree.js';
import type { IoReply, IoRequest } from './io-protocol.js';
import type { ReadOutcome, ReadRequest } from './read-file-bytes.js';

// From TypeScript sources (tests) the thread needs the tsx loader; from dist it is plain JavaScript.
const FROM_SOURCE = import.meta.url.endsWith('.ts');
const DEV_ENTRY = new URL('./io-thread.dev.mjs', import.meta.url);

/** What a thread runs: reads and assemblies (lean, kept), or a walk (its own thread). */
type ThreadEntry = 'file-thread' | 'walk-thread';

interface Pending {
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
  onPartial?: (files: WalkedFile[]) => void;
}

interface IoThread {
  worker: Worker;
  pending: Map<number, Pending>;
  failure: Error | null;
}

/** Long-lived threads of one role, started as they are first needed; a request goes to the least busy. */
class ThreadSet {
  readonly #threads = new Set<IoThread>();
  constructor(readonly size: number) {}

  pick(): IoThread {
    let best: IoThread | null = null;
    for (const thread of this.#threads) if (best === null || thread.pending.size < best.pending.size) best = thread;
    if (best !== null && (best.pending.size === 0 || this.#threads.size >= this.size)) return best;
    return this.#add();
  }

  /** Starts every thread the set may have, ahead of the work that would start them. */
  fill(): void {
    while (this.#threads.size < this.size) this.#add();
  }

  #add(): IoThread {
    const thread = spawn('file-thread', (gone) => this.#threads.delete(gone));
    this.#threads.add(thread);
    return thread;
  }
}

// Two lean threads serve reads and estimates alike, each request going to the less busy one.
const fileThreads = new ThreadSet(2);
let nextId = 1;

function rebuild(error: { name: string; message: string; code?: string }): Error {
  if (error.name === 'ScanRootError' && error.code) return new ScanRootError(error.code as ScanRootErrorCode, error.message);
  if (error.name === 'WalkTimeoutError') return Object.assign(new WalkTimeoutError(0), { message: error.message });
  return Object.assign(new Error(error.message), { name: error.name, ...(error.code ? { code: error.code } : {}) });
}

function spawn(entry: ThreadEntry, onExit: (thread: IoThread) => void): IoThread {
  const worker = FROM_SOURCE
    ? new Worker(DEV_ENTRY, { execArgv: ['--conditions=source'], workerData: { entry: `./${entry}.ts` }, resourceLimits: { maxYoungGenerationSizeMb: 4 } })
    : new Worker(new URL(`./${entry}.js`, import.meta.url), { resourceLimits: { maxYoungGenerationSizeMb: 4 } });
  const thread: IoThread = { worker, pending: new Map(), failure: null };
  worker.on('message', (reply: IoReply) => {
    if ('partial' in reply) {
      thread.pending.get(reply.id)?.onPartial?.(reply.partial);
      return;
    }
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

/** A request before it is given its id. */
type Unnumbered = IoRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never;

function ask<T>(thread: IoThread, request: Unnumbered, onPartial?: (files: WalkedFile[]) => void): Promise<T> {
  const id = nextId++;
  return new Promise<T>((resolve, reject) => {
    thread.pending.set(id, { resolve: resolve as (value: unknown) => void, reject, ...(onPartial ? { onPartial } : {}) });
    thread.worker.ref();
    thread.worker.postMessage({ ...request, id });
  });
}

/**
 * Starts both file threads now. A long-lived process calls it while idle: otherwise the second
 * starts the first time a batch finds the first busy, i.e. in the middle of the first big scan,
 * whose counting it then slows with its start-up (~0.1 CPU-seconds).
 */
export function prepareFileThreads(): void {
  fileThreads.fill();
}

/** The next walk's thread, started ahead by prepareWalkThread. */
let spareWalkThread: IoThread | null = null;

function spawnWalkThread(): IoThread {
  return spawn('walk-thread', (gone) => {
    if (spareWalkThread === gone) spareWalkThread = null;
  });
}

/**
 * Starts the next walk's thread now, unless one is already waiting, so that walk does not wait for
 * it. For a long-lived process with time to spare (a worker between scans); an idle thread holds
 * a few megabytes.
 */
export function prepareWalkThread(): void {
  spareWalkThread ??= spawnWalkThread();
}

/**
 * Walks of at most this many paths (kept and skipped) leave their thread for the next walk: a few
 * megabytes of garbage at most, and small scans back to back no longer wait 10-50 ms each for a
 * thread to start.
 */
export const KEEP_WALK_THREAD_UP_TO = 2_000;

/**
 * `walkTreeInto` on a thread of its own: chunks of files reach `sink` as the thread finds them. The
 * thread ends with the walk, unless the walk was small and no other thread waits for the next one.
 * A filter function cannot cross threads: use `docsOnly`.
 *
 * A walk that runs past `limits.walkTimeoutMs`, or whose `signal` aborts, ends its thread at once
 * (whatever it was computing) and rejects with WalkTimeoutError or the signal's reason.
 */
export function walkInThread(input: WalkInput, sink: WalkSink, signal?: AbortSignal): Promise<SkippedPath[]> {
  if (input.acceptFile !== undefined) return Promise.reject(new TypeError('walkInThread takes no acceptFile function; set docsOnly instead'));
  if (signal?.aborted) return Promise.reject(signal.reason as Error);
  const thread = spareWalkThread ?? spawnWalkThread();
  spareWalkThread = null;
  let paths = 0;
  let stop: Error | null = null;
  const counted: WalkSink = (files) => {
    if (stop === null) {
      paths += files.length;
      sink(files);
    }
  };
  let halted!: (error: Error) => void;
  const halt = new Promise<never>((_, reject) => (halted = reject));
  const end = (error: Error): void => {
    if (stop !== null) return;
    stop = error;
    halted(error);
    void thread.worker.terminate();
  };
  const onAbort = (): void => end(signal?.reason as Error);
  signal?.addEventListener('abort', onAbort, { once: true });
  const timer = setTimeout(() => end(new WalkTimeoutError(input.limits.walkTimeoutMs)), input.limits.walkTimeoutMs);
  const walked = ask<SkippedPath[]>(thread, { kind: 'walk', input }, counted).then(
    (skipped) => {
      if (paths + skipped.length <= KEEP_WALK_THREAD_UP_TO && spareWalkThread === null) spareWalkThread = thread;
      else void thread.worker.terminate();
      return skipped;
    },
    (error: unknown) => {
      void thread.worker.terminate();
      throw error;
    },
  );
  walked.catch(() => undefined); // once halted, the thread's own end is nobody's concern
  return Promise.race([walked, halt]).finally(() => {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  });
}

/**
 * Token estimates of a batch of contents on a file thread: a preview's one heavy computation (about
 * 160 MB/s) runs on both cores instead of the caller's. Contents in shared memory (the read ring)
 * cross without a copy.
 */
export function estimateInThread(contents: Uint8Array[]): Promise<number[]> {
  return ask<number[]>(fileThreads.pick(), { kind: 'estimate', contents });
}

/** A batch of reads on the read thread, into the shared memory of each request's `into`. */
export function readFilesInThread(requests: readonly ReadRequest[], maxBytes: number): Promise<ReadOutcome[]> {
  return ask<ReadOutcome[]>(fileThreads.pick(), { kind: 'read', requests: [...requests], maxBytes });
}
