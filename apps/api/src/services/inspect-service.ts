import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { ERROR_CODES, ScanError } from '@reposcan/contracts';
import type { ErrorCode, InspectResult } from '@reposcan/contracts';
import type { InspectJob, InspectOutcome, InspectThreadMessage } from '../inspect/inspect-job.js';

// From TypeScript sources (tests, dev) the thread needs the tsx loader and the `source`
// export condition; from dist it is plain JavaScript.
const FROM_SOURCE = import.meta.url.endsWith('.ts');
const THREAD_URL = new URL(FROM_SOURCE ? '../inspect/inspect-thread.dev.mjs' : '../inspect/inspect-thread.js', import.meta.url);
const THREAD_ARGV = FROM_SOURCE ? ['--conditions=source'] : [];

export interface InspectServiceOptions {
  concurrency: number;
  timeoutMs: number;
}

/** A started thread waiting for a preview, with what to undo when one takes it. */
interface WaitingThread {
  worker: Worker;
  release: () => void;
}

/**
 * Inspect runs in the API process but never on its event loop: each preview runs on a worker
 * thread with a temporary folder outside DATA_DIR, and at most `concurrency` run at once.
 *
 * A new thread spends 0.3–0.5 s loading its modules and a first preview warms its code and its own
 * io threads, so a thread whose preview succeeded is kept, waiting, for the next one (one at most;
 * when none is left, one is started as a preview ends). A preview that fails, times out or is
 * abandoned ends its thread, which stops its git and frees everything it held.
 */
export class InspectService {
  private active = 0;
  private waiting: WaitingThread | null = null;
  private closed = false;

  constructor(private readonly options: InspectServiceOptions) {}

  get inFlight(): number {
    return this.active;
  }

  /** `signal`: the client went away; the thread is stopped (git killed) and its slot freed at once. */
  async inspect(job: Omit<InspectJob, 'workDir'>, signal?: AbortSignal): Promise<InspectResult> {
    if (this.active >= this.options.concurrency) {
      throw new ScanError('INSPECT_BUSY', `All ${this.options.concurrency} inspect slots are busy. Retry in a moment.`, { retryAfterSeconds: 1 });
    }
    this.active += 1;
    const workDir = await mkdtemp(join(tmpdir(), 'reposcan-inspect-'));
    try {
      return await this.runThread({ ...job, workDir }, signal);
    } finally {
      this.active -= 1;
      await rm(workDir, { recursive: true, force: true });
      // Started after a preview, never during one: its start-up would take that preview's CPU.
      if (this.waiting === null && !this.closed) this.keepWaiting(startThread());
    }
  }

  /** Ends the waiting thread; previews in flight end with their own threads. */
  async close(): Promise<void> {
    this.closed = true;
    const waiting = this.waiting;
    this.waiting = null;
    waiting?.release();
    await waiting?.worker.terminate();
  }

  /** Keeps `worker` for the next preview, or ends it when one is kept already. */
  private keepWaiting(worker: Worker): void {
    if (this.waiting !== null || this.closed) {
      void worker.terminate();
      return;
    }
    // A waiting thread holds nothing open: the process may exit around it.
    worker.unref();
    // One that dies while waiting is dropped; the next preview starts a thread of its own.
    const onError = (): void => {};
    const onExit = (): void => {
      if (this.waiting?.worker === worker) this.waiting = null;
    };
    worker.on('error', onError);
    worker.once('exit', onExit);
    this.waiting = {
      worker,
      release: () => {
        worker.off('error', onError);
        worker.off('exit', onExit);
      },
    };
  }

  private takeThread(): Worker {
    const waiting = this.waiting;
    this.waiting = null;
    if (waiting === null) return startThread();
    waiting.release();
    waiting.worker.ref();
    return waiting.worker;
  }

  private runThread(job: InspectJob, signal?: AbortSignal): Promise<InspectResult> {
    return new Promise((resolve, reject) => {
      const worker = this.takeThread();
      worker.postMessage({ job } satisfies InspectThreadMessage);
      let settled = false;
      const settle = (fn: () => void): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
        fn();
      };
      // Ask the thread to abort (it kills git), then make sure it is gone.
      const stop = (reason: Error): void => {
        worker.postMessage('abort');
        setTimeout(() => void worker.terminate(), 2000).unref();
        settle(() => reject(reason));
      };
      // The signal's own reason: whoever aborts says why (a client that went away is no failure).
      const onAbort = (): void => stop(signal?.reason instanceof Error ? signal.reason : new Error('inspect abandoned'));
      const onMessage = (outcome: InspectOutcome): void => {
        settle(() => (outcome.ok ? resolve(outcome.data) : reject(rebuildError(outcome.error))));
        if (outcome.ok) this.keepWaiting(worker);
        else void worker.terminate();
      };
      const onError = (error: Error): void => settle(() => reject(error));
      const onExit = (code: number): void => settle(() => reject(new Error(`inspect thread exited with code ${code}`)));
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
      const timer = setTimeout(
        () => stop(new ScanError('SCAN_TIMEOUT', `The preview took longer than ${Math.round(this.options.timeoutMs / 1000)} s. Narrow it with include_patterns or a subfolder URL, or run a full scan.`)),
        this.options.timeoutMs,
      );
      signal?.addEventListener('abort', onAbort, { once: true });
      if (signal?.aborted) onAbort();
    });
  }
}

function startThread(): Worker {
  return new Worker(THREAD_URL, { execArgv: THREAD_ARGV });
}

function rebuildError(error: { name: string; code?: string; message: string }): Error {
  if (error.name === 'ScanError' && ERROR_CODES.includes(error.code as ErrorCode)) return new ScanError(error.code as ErrorCode, error.message);
  return new Error(error.message);
}
