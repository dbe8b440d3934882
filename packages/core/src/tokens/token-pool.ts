// Exact token counting on worker threads, one batch per worker at a time, results in input order.
// Workers start lazily (or all at once with warm(), so the table load overlaps the walk and reads),
// hold the process open only while they have work, and are replaced after a crash.
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { TokenEncodingName } from '../types.js';
import { loadBpeTables, splitUtf8 } from './bpe-engine.js';
import { createTokenCounter } from './token-counter.js';

export interface TokenPoolOptions {
  encoding: TokenEncodingName;
  /** Worker threads; defaults to `os.availableParallelism()`. 0 counts in the calling thread. */
  threads?: number;
  /** Test seam: a worker exits (code 70) when a batch contains exactly this text. */
  exitOnTextForTest?: string;
}

/**
 * Exact token counts of a batch of UTF-8 contents, in input order. Once `signal` aborts, the
 * batch rejects with its reason and no thread spends more time on it.
 */
export type CountTokens = (contents: Uint8Array[], signal?: AbortSignal) => Promise<number[]> | number[];

export interface TokenPool {
  readonly encoding: TokenEncodingName;
  readonly threads: number;
  /**
   * Exact token counts of a batch of UTF-8 contents (aim for ~50 files or ~1 MB), in input order.
   * Contents in a SharedArrayBuffer reach the worker without a copy. Rejects with an Error if the
   * worker running the batch dies; later batches run on a replacement. Once `signal` aborts, the
   * call rejects with its reason at once: a waiting batch is dropped, and a running one gets
   * ABORT_GRACE_MS to finish before its thread is ended (and replaced).
   */
  count(contents: readonly Uint8Array[], signal?: AbortSignal): Promise<number[]>;
  /** Starts every worker and resolves once each has loaded its BPE tables. */
  warm(): Promise<void>;
  /** Stops the workers; pending and later batches reject. */
  close(): Promise<void>;
}

interface Job {
  contents: readonly Uint8Array[];
  resolve: (counts: number[]) => void;
  reject: (error: Error) => void;
}

interface Slot {
  worker: Worker;
  ready: Promise<void>;
  isReady: boolean;
  job: Job | null;
  /** The worker's uncaught error, reported when it exits. */
  failure: Error | null;
}

/** See count-tokens.worker.js: one batch per worker at a time, so a reply needs no id. */
type WorkerReply = { ready: true } | { counts: number[] } | { error: string };

const WORKER_URL = new URL('./count-tokens.worker.js', import.meta.url);
// From TypeScript sources (tests) the worker's imports need the tsx loader, registered by the io
// threads' development entry (io-thread.dev.mjs); from dist it is plain JavaScript.
const FROM_SOURCE = import.meta.url.endsWith('.ts');
const DEV_ENTRY = new URL('../io/io-thread.dev.mjs', import.meta.url);

/**
 * How long a running batch of an aborted scan may go on before its thread is ended. A batch
 * normally takes milliseconds; ending a thread costs a replacement's start-up.
 */
export const ABORT_GRACE_MS = 300;

/**
 * Contents larger than this are cut into parts of PART_BYTES counted side by side: a 9 MB file
 * counted whole kept one thread busy for 0.4 s while the others waited for it to leave the read ring.
 */
const SPLIT_ABOVE = 2 << 20;
const PART_BYTES = 1 << 20;

export function createTokenPool(options: TokenPoolOptions): TokenPool {
  const { encoding, exitOnTextForTest } = options;
  const requested = options.threads ?? availableParallelism();
  const threads = Number.isFinite(requested) ? Math.max(0, Math.floor(requested)) : availableParallelism();
  const slots: Slot[] = [];
  const queue: Job[] = [];
  let closed = false;
  let inThread: ReturnType<typeof createTokenCounter> | undefined;

  function spawn(): Slot {
    // A small young generation: a worker makes only short-lived slice strings, and V8's default
    // lets each worker's new space grow to tens of megabytes it never needs.
    // The tables are built once here, in shared memory, and every worker counts over them.
    const tables = loadBpeTables(encoding);
    const workerData = { tables, exitOnText: exitOnTextForTest, entry: '../tokens/count-tokens.worker.js' };
    const resourceLimits = { maxYoungGenerationSizeMb: 4 };
    const worker = FROM_SOURCE
      ? new Worker(DEV_ENTRY, { execArgv: ['--conditions=source'], workerData, resourceLimits })
      : new Worker(WORKER_URL, { workerData, resourceLimits });
    let markReady!: () => void;
    let failReady!: (error: Error) => void;
    const ready = new Promise<void>((resolve, reject) => {
      markReady = resolve;
      failReady = reject;
    });
    // warm() may never be called; the failure is also reported through the batches.
    ready.catch(() => undefined);
    const slot: Slot = { worker, ready, isReady: false, job: null, failure: null };
    slots.push(slot);

    worker.on('message', (reply: WorkerReply) => {
      if ('ready' in reply) {
        slot.isReady = true;
        markReady();
      } else {
        const job = slot.job;
        slot.job = null;
        if ('error' in reply) job?.reject(new Error(`Token counting failed: ${reply.error}`));
        else job?.resolve(reply.counts);
        dispatch();
      }
      updateRef(slot);
    });
    worker.on('error', (error) => {
      slot.failure = error;
    });
    worker.on('exit', (code) => {
      const index = slots.indexOf(slot);
      if (index < 0) return; // retired: its batch was already rejected
      slots.splice(index, 1);
      if (closed) return;
      const error = new Error(`Token worker exited with code ${code}`, { cause: slot.failure ?? undefined });
      slot.job?.reject(error);
      if (!slot.isReady) {
        // It died while loading: a replacement would too, so fail what is waiting instead of looping.
        failReady(error);
        for (const job of queue.splice(0)) job.reject(error);
        return;
      }
      dispatch();
    });
    updateRef(slot);
    return slot;
  }

  /** A worker keeps the process alive only while it loads or runs a batch. */
  function updateRef(slot: Slot): void {
    if (!slot.isReady || slot.job !== null) slot.worker.ref();
    else slot.worker.unref();
  }

  function dispatch(): void {
    for (let job = queue[0]; job !== undefined; job = queue[0]) {
      const slot = slots.find((s) => s.job === null) ?? (slots.length < threads ? spawn() : undefined);
      if (slot === undefined) return;
      queue.shift();
      slot.job = job;
      updateRef(slot);
      slot.worker.postMessage(job.contents);
    }
  }

  /** Ends the slot's thread under a batch whose caller has gone; a replacement starts on demand. */
  function retire(slot: Slot): void {
    const index = slots.indexOf(slot);
    if (index < 0) return;
    slots.splice(index, 1);
    slot.job = null;
    void slot.worker.terminate();
    dispatch();
  }

  function submit(contents: readonly Uint8Array[], signal?: AbortSignal): Promise<number[]> {
    if (signal?.aborted) return Promise.reject(signal.reason as Error);
    return new Promise<number[]>((resolve, reject) => {
      const job: Job = { contents, resolve, reject };
      if (signal !== undefined) {
        const onAbort = (): void => {
          const waiting = queue.indexOf(job);
          if (waiting >= 0) queue.splice(waiting, 1);
          else {
            // Running: its caller hears at once; the thread gets a moment to finish before it is ended.
            setTimeout(() => {
              const slot = slots.find((s) => s.job === job);
              if (slot) retire(slot);
            }, ABORT_GRACE_MS);
          }
          reject(signal.reason as Error);
        };
        job.resolve = (counts) => {
          signal.removeEventListener('abort', onAbort);
          resolve(counts);
        };
        job.reject = (error) => {
          signal.removeEventListener('abort', onAbort);
          reject(error);
        };
        signal.addEventListener('abort', onAbort, { once: true });
      }
      queue.push(job);
      dispatch();
    });
  }

  /** The small contents as one batch, each part of a big one as a batch of its own; totals put back in order. */
  async function countSplit(contents: readonly Uint8Array[], signal?: AbortSignal): Promise<number[]> {
    const small: number[] = [];
    const jobs: Array<{ owner: number; counts: Promise<number[]> }> = [];
    contents.forEach((content, i) => {
      if (content.length <= SPLIT_ABOVE) small.push(i);
      else for (const part of splitUtf8(content, PART_BYTES)) jobs.push({ owner: i, counts: submit([part], signal) });
    });
    const totals = new Array<number>(contents.length).fill(0);
    const [smallCounts, partCounts] = await Promise.all([
      small.length > 0 ? submit(small.map((i) => contents[i] as Uint8Array), signal) : Promise.resolve([]),
      Promise.all(jobs.map((job) => job.counts)),
    ]);
    small.forEach((owner, k) => (totals[owner] = smallCounts[k] ?? 0));
    jobs.forEach((job, k) => (totals[job.owner] = (totals[job.owner] ?? 0) + (partCounts[k]?.[0] ?? 0)));
    return totals;
  }

  return {
    encoding,
    threads,
    count(contents, signal) {
      if (closed) return Promise.reject(new Error('TokenPool is closed'));
      if (contents.length === 0) return Promise.resolve([]);
      if (threads === 0) {
        try {
          inThread ??= createTokenCounter(encoding);
          const counter = inThread;
          return Promise.resolve(contents.map((content) => counter.countUtf8(content)));
        } catch (error) {
          return Promise.reject(error instanceof Error ? error : new Error(String(error)));
        }
      }
      if (threads > 1 && contents.some((content) => content.length > SPLIT_ABOVE)) return countSplit(contents, signal);
      return submit(contents, signal);
    },
    async warm() {
      if (closed) throw new Error('TokenPool is closed');
      if (threads === 0) {
        inThread ??= createTokenCounter(encoding);
        inThread.count('');
      }
      while (slots.length < threads) spawn();
      await Promise.all(slots.map((slot) => slot.ready));
    },
    async close() {
      if (closed) return;
      closed = true;
      const error = new Error('TokenPool is closed');
      for (const job of queue.splice(0)) job.reject(error);
      for (const slot of slots) slot.job?.reject(error);
      await Promise.all(slots.map((slot) => slot.worker.terminate()));
    },
  };
}
