import type { ScanJobContext, ScanProcessor } from '@reposcan/queue';
import { finalizeCompleted, readAttemptStart, ScanAttempt } from './scan-attempt.js';
import type { ScanAttemptDeps } from './scan-attempt.js';

export type ScanProcessorDeps = ScanAttemptDeps;

/**
 * One scan attempt: read the accepted request from the volume, build the tree, run the engine
 * into a private staging folder, publish it with one rename, then record the final state.
 * Safe to run twice for the same scan: the first publish wins and state never leaves a
 * terminal value. The steps are ScanAttempt's.
 */
export function createScanProcessor(deps: ScanProcessorDeps): ScanProcessor {
  return async (job: ScanJobContext): Promise<void> => {
    const start = await readAttemptStart(deps.store, job.scanId);
    if (start.kind === 'skip') return;
    if (start.kind === 'published') return finalizeCompleted(deps.store, job.scanId);
    const attempt = ScanAttempt.open(deps, job, start.state, start.request);
    try {
      await attempt.makeStaging();
      await attempt.begin();
      const prepared = await attempt.prepareSource();
      const run = await attempt.runEngine(prepared);
      const ours = await attempt.publish(run);
      await attempt.complete(run, ours);
    } catch (error) {
      await attempt.settleFailure(error);
    } finally {
      await attempt.close();
    }
  };
}
