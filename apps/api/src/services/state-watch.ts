import type { StateSignals } from '@reposcan/queue';

/**
 * Waits for the next change of one scan's state: woken by its state signal, or after the poll
 * interval at the latest (a signal can be lost; the volume is the truth). Open it before the
 * first read of the state, so a change between a read and the next wait is never missed.
 */
export class StateWatch {
  /** A change was announced since the last wait ended. */
  private changed = false;
  private wake: (() => void) | null = null;
  private readonly unlisten: () => void;

  constructor(signals: StateSignals | undefined, scanId: string) {
    this.unlisten =
      signals?.listen(scanId, () => {
        this.changed = true;
        this.wake?.();
      }) ?? (() => {});
  }

  /** Resolves on the next announced change, after `ms`, or when `signal` aborts, whichever comes first. */
  async next(ms: number, signal?: AbortSignal): Promise<void> {
    if (!this.changed && !signal?.aborted) {
      await new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', done);
          this.wake = null;
          resolve();
        };
        const timer = setTimeout(done, ms);
        signal?.addEventListener('abort', done, { once: true });
        this.wake = done;
      });
    }
    this.changed = false;
  }

  close(): void {
    this.unlisten();
    this.wake?.();
  }
}
