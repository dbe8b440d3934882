// Exact token counting on worker threads, one batch per worker at a time, results in input order.
// Workers start lazily (or all at once with warm(), so the table load overlaps the walk and reads),
// hold the process open only while they have work, and are replaced after a crash.
import { availableParallelism } from 'node:os';
import { threadEntry, WorkerThread } from '../threads/worker-thread.js';
import type { TokenEncodingName } from '../types.js';
import { loadBpeTables, splitUtf8 } from './bpe-engine.js';
import type { CountTokensThreadData } from './count-tokens.worker.js';
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
  signal: AbortSignal | undefined;
  resolve: (counts: number[]) => void;
  reject: (error: Error) => void;
}

const ENTRY = threadEntry(import.meta.url, 'count-tokens.worker');

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
  const slots: WorkerThread[] = [];
  const queue: Job[] = [];
  const running = new Set<Job>();
  // A scan's batches share its signal: one abort listener per signal drops all of them that wait,
  // however many there are (one per batch would pass Node's listener warning on a busy scan).
  const waiting = new Map<AbortSignal, { jobs: Set<Job>; onAbort: () => void }>();
  let closed = false;
  let inThread: ReturnType<typeof createTokenCounter> | undefined;

  function spawn(): WorkerThread {
    // The tables are built once here, in shared memory, and every thread counts over them.
    const tables = loadBpeTables(encoding);
    const slot = new WorkerThread({
      entry: ENTRY,
      label: 'Token worker',
      data: { tables, exitOnText: exitOnTextForTest } satisfies CountTokensThreadData,
      // A thread makes only short-lived slice strings; V8's default young generation would grow to tens of MB.
      youngGenerationMb: 4,
      holdWhileStarting: true,
      onIdle: dispatch,
      onExit(gone, code) {
        const index = slots.indexOf(gone);
        if (index < 0) return; // retired: its batch was already rejected
        slots.splice(index, 1);
        if (closed) return;
        if (!gone.isReady) {
          // It died while loading: a replacement would too, so fail what is waiting instead of looping.
          const error = new Error(`Token worker exited with code ${code} before it was ready`);
          rejectWaiting(error);
          return;
        }
        dispatch();
      },
    });
    slots.push(slot);
    return slot;
  }

  function dispatch(): void {
    for (let job = queue[0]; job !== undefined; job = queue[0]) {
      const slot = slots.find((s) => s.busy === 0) ?? (slots.length < threads ? spawn() : undefined);
      if (slot === undefined) return;
      queue.shift();
      dequeued(job);
      running.add(job);
      // Aborted while running: its caller hears at once; the thread gets a moment to finish before it is ended.
      slot.request<number[]>(job.contents, { signal: job.signal, abortGraceMs: ABORT_GRACE_MS }).then(
        (counts) => {
          running.delete(job);
          job.resolve(counts);
        },
        (error: Error) => {
          running.delete(job);
          job.reject(error);
        },
      );
    }
  }

  function enqueue(job: Job): void {
    queue.push(job);
    const { signal } = job;
    if (signal === undefined) return;
    let entry = waiting.get(signal);
    if (entry === undefined) {
      const jobs = new Set<Job>();
      const onAbort = (): void => {
        waiting.delete(signal);
        for (const dropped of jobs) {
          queue.splice(queue.indexOf(dropped), 1);
          dropped.reject(signal.reason as Error);
        }
      };
      entry = { jobs, onAbort };
      waiting.set(signal, entry);
      signal.addEventListener('abort', onAbort, { once: true });
    }
    entry.jobs.add(job);
  }

  /** The job leaves the queue (to run, or rejected by close); once running, the thread's request handles an abort. */
  function dequeued(job: Job): void {
    const entry = job.signal === undefined ? undefined : waiting.get(job.signal);
    if (entry === undefined || !entry.jobs.delete(job) || entry.jobs.size > 0) return;
    waiting.delete(job.signal as AbortSignal);
    job.signal?.removeEventListener('abort', entry.onAbort);
  }

  function rejectWaiting(error: Error): void {
    for (const job of queue.splice(0)) {
      dequeued(job);
      job.reject(error);
    }
  }

  function submit(contents: readonly Uint8Array[], signal?: AbortSignal): Promise<number[]> {
    if (signal?.aborted) return Promise.reject(signal.reason as Error);
    return new Promise<number[]>((resolve, reject) => {
      enqueue({ contents, signal, resolve, reject });
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
      small.length > 0
        ? submit(
            small.map((i) => contents[i] as Uint8Array),
            signal,
          )
        : Promise.resolve([]),
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
      rejectWaiting(error);
      for (const job of running) job.reject(error);
      running.clear();
      await Promise.all(slots.splice(0).map((slot) => slot.terminate()));
    },
  };
}
