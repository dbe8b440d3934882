import type { Logger } from '@reposcan/runtime';
import type { RunningWorker } from './start-scan-worker.js';

/**
 * Stops a worker the way SIGTERM should: it takes no new scans, running ones get `graceMs` to
 * finish, then whatever still runs is handed back to the queue (no attempt used up) for another
 * worker to pick up. An orchestrator's kill after its own grace period loses nothing either:
 * the job's lock expires and it runs again elsewhere.
 */
export async function closeWithinGrace(worker: RunningWorker, graceMs: number, log: Logger): Promise<void> {
  const timer = setTimeout(() => {
    log.warn({ graceMs }, 'shutdown grace over: handing running scans back to the queue');
    void worker.close({ force: true });
  }, graceMs);
  try {
    await worker.close();
  } finally {
    clearTimeout(timer);
  }
}
