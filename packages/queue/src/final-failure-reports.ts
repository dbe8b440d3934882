import type { QueueLog } from './queue-log.js';
import type { FinalFailure, ScanWorkerOptions } from './queue-transport.js';

/**
 * A worker's onFinalFailure calls: each one's failure is logged (nobody else could hear it), and
 * a closing worker waits for those still running.
 */
export class FinalFailureReports {
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly onFinalFailure: ScanWorkerOptions['onFinalFailure'],
    private readonly log: QueueLog,
  ) {}

  report(scanId: string, reason: FinalFailure): void {
    if (!this.onFinalFailure) return;
    const callback = this.onFinalFailure(scanId, reason)
      .catch((e: unknown) =>
        this.log('error', 'onFinalFailure failed', {
          scanId,
          code: reason.code,
          err: e instanceof Error ? e.message : String(e),
        }),
      )
      .finally(() => this.pending.delete(callback));
    this.pending.add(callback);
  }

  async settled(): Promise<void> {
    await Promise.allSettled([...this.pending]);
  }
}
