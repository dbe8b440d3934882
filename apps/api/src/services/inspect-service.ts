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

/**
 * Inspect runs in the API process but never on its event loop: each preview gets a worker
 * thread and a temporary folder outside DATA_DIR, and at most `concurrency` run at once.
 *
 * A thread spends 0.3–0.5 s loading its modules, a third of a preview of a 70 MB tree, so once
 * previews are asked for, one thread is kept started and waiting (about 13 MB): the next preview
 * starts on it at once. Each thread still serves one preview and ends with it, so no preview
 * inherits another's memory, and an abandoned one is stopped by ending its thread.
 */
export class InspectService {
  private active = 0;
  private spare: Worker | null = null;
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
      this.keepSpare();
    }
  }

  /** Ends the waiting thread; previews in flight end with their own threads. */
  async close(): Promise<void> {
    this.closed = true;
    const spare = this.spare;
    this.spare = null;
    await spare?.terminate();
  }

  /** Started once a preview is over, not while one runs: its start-up would take that preview's CPU. */
  private keepSpare(): void {
    if (this.spare !== null || this.closed) return;
    const worker = startThread();
    // A waiting thread holds nothing open: the process may exit around it.
    worker.unref();
    // One that fails to start is dropped; the next preview starts a thread of its own.
    worker.on('error', () => {});
    worker.once('exit', () => {
      if (this.spare === worker) this.spare = null;
    });
    this.spare = worker;
  }

  private takeThread(): Worker {
    const spare = this.spare;
    this.spare = null;
    if (spare === null) return startThread();
    spare.removeAllListeners();
    spare.ref();
    return spare;
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
        fn();
      };
      // Ask the thread to abort (it kills git), then make sure it is gone.
      const stop = (reason: Error): void => {
        worker.postMessage('abort');
        setTimeout(() => void worker.terminate(), 2000).unref();
        settle(() => reject(reason));
      };
      const onAbort = (): void => stop(new Error('inspect abandoned: the client went away'));
      signal?.addEventListener('abort', onAbort, { once: true });
      if (signal?.aborted) onAbort();
      const timer = setTimeout(
        () => stop(new ScanError('SCAN_TIMEOUT', `The preview took longer than ${Math.round(this.options.timeoutMs / 1000)} s. Narrow it with include_patterns or a subfolder URL, or run a full scan.`)),
        this.options.timeoutMs,
      );
      worker.once('message', (outcome: InspectOutcome) => {
        settle(() => (outcome.ok ? resolve(outcome.data) : reject(rebuildError(outcome.error))));
        void worker.terminate();
      });
      worker.once('error', (error) => settle(() => reject(error)));
      worker.once('exit', (code) => settle(() => reject(new Error(`inspect thread exited with code ${code}`))));
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
