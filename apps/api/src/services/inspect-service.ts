import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScanError } from '@reposcan/contracts';
import type { InspectResult } from '@reposcan/contracts';
import { threadEntry, WorkerThread } from '@reposcan/core';
import type { InspectJob } from '../inspect/inspect-job.js';

const ENTRY = threadEntry(import.meta.url, '../inspect/inspect-thread');

/** How long an abandoned or timed-out preview has to stop its git before its thread is ended. */
const STOP_GRACE_MS = 2000;

export interface InspectServiceOptions {
  concurrency: number;
  timeoutMs: number;
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
/** Slots one caller (a key, or an address without keys) may hold at once: half of them, at least one. */
export function slotsPerCaller(concurrency: number): number {
  return Math.max(1, Math.ceil(concurrency / 2));
}

export class InspectService {
  private active = 0;
  private readonly held = new Map<string, number>();
  private waiting: WorkerThread | null = null;
  private closed = false;

  constructor(private readonly options: InspectServiceOptions) {}

  get inFlight(): number {
    return this.active;
  }

  /**
   * `caller`: who asks (clientOf), so that one caller's previews never hold every slot.
   * `signal`: the client went away; the thread is stopped (git killed) and its slot freed at once.
   */
  async inspect(job: Omit<InspectJob, 'workDir'>, caller: string, signal?: AbortSignal): Promise<InspectResult> {
    const { concurrency } = this.options;
    if (this.active >= concurrency) {
      throw new ScanError('INSPECT_BUSY', `All ${concurrency} inspect slots are busy. Retry in a moment.`, {
        retryAfterSeconds: 1,
      });
    }
    const mine = this.held.get(caller) ?? 0;
    if (mine >= slotsPerCaller(concurrency)) {
      throw new ScanError(
        'INSPECT_BUSY',
        `You already run ${mine} of the ${concurrency} inspect slots, as many as one client may hold at once. Wait for one of your previews to finish.`,
        { retryAfterSeconds: 1 },
      );
    }
    this.active += 1;
    this.held.set(caller, mine + 1);
    const workDir = await mkdtemp(join(tmpdir(), 'reposcan-inspect-'));
    try {
      return await this.runThread({ ...job, workDir }, signal);
    } finally {
      this.active -= 1;
      const left = (this.held.get(caller) ?? 1) - 1;
      if (left > 0) this.held.set(caller, left);
      else this.held.delete(caller);
      await rm(workDir, { recursive: true, force: true });
      // Started after a preview, never during one: its start-up would take that preview's CPU.
      if (this.waiting === null && !this.closed) this.keepWaiting(this.startThread());
    }
  }

  /** Ends the waiting thread; previews in flight end with their own threads. */
  async close(): Promise<void> {
    this.closed = true;
    const waiting = this.waiting;
    this.waiting = null;
    await waiting?.terminate();
  }

  /** Keeps `thread` for the next preview, or ends it when one is kept already. */
  private keepWaiting(thread: WorkerThread): void {
    // An idle thread holds nothing open (WorkerThread unrefs it): the process may exit around it.
    if (this.waiting !== null || this.closed || thread.exited) void thread.terminate();
    else this.waiting = thread;
  }

  private takeThread(): WorkerThread {
    const waiting = this.waiting;
    this.waiting = null;
    return waiting === null || waiting.exited ? this.startThread() : waiting;
  }

  private startThread(): WorkerThread {
    return new WorkerThread({
      entry: ENTRY,
      label: 'inspect thread',
      // One that dies while waiting is dropped; the next preview starts a thread of its own.
      onExit: (gone) => {
        if (this.waiting === gone) this.waiting = null;
      },
    });
  }

  private async runThread(job: InspectJob, signal?: AbortSignal): Promise<InspectResult> {
    const thread = this.takeThread();
    // The client's signal and the deadline stop a preview alike: the thread is told to abort (it
    // kills git) and is ended after STOP_GRACE_MS. The signal's own reason: whoever aborts says
    // why (a client that went away is no failure).
    const stop = new AbortController();
    const onAbort = (): void =>
      stop.abort(signal?.reason instanceof Error ? signal.reason : new Error('inspect abandoned'));
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted) onAbort();
    const timer = setTimeout(
      () =>
        stop.abort(
          new ScanError(
            'SCAN_TIMEOUT',
            `The preview took longer than ${Math.round(this.options.timeoutMs / 1000)} s: for a large tree, narrow it with include_patterns or a subfolder URL, or run a full scan; for a git server slow to answer, try again later.`,
          ),
        ),
      this.options.timeoutMs,
    );
    try {
      const result = await thread.request<InspectResult>(job, { signal: stop.signal, abortGraceMs: STOP_GRACE_MS });
      this.keepWaiting(thread);
      return result;
    } catch (error) {
      // A preview that fails, times out or is abandoned ends its thread, which frees everything it held.
      if (stop.signal.aborted) setTimeout(() => void thread.terminate(), STOP_GRACE_MS).unref();
      else void thread.terminate();
      throw error;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
  }
}
