import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { ERROR_CODES, ScanError } from '@reposcan/contracts';
import type { ErrorCode, InspectResult } from '@reposcan/contracts';
import type { InspectJob, InspectOutcome } from '../inspect/inspect-job.js';

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
 */
export class InspectService {
  private active = 0;

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
    }
  }

  private runThread(job: InspectJob, signal?: AbortSignal): Promise<InspectResult> {
    return new Promise((resolve, reject) => {
      const worker = new Worker(THREAD_URL, { workerData: job, execArgv: THREAD_ARGV });
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

function rebuildError(error: { name: string; code?: string; message: string }): Error {
  if (error.name === 'ScanError' && ERROR_CODES.includes(error.code as ErrorCode)) return new ScanError(error.code as ErrorCode, error.message);
  return new Error(error.message);
}
