import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ScanStateRecord } from '@reposcan/contracts';
import { artifactDirRelative } from '@reposcan/storage';
import type { ScanStore } from '@reposcan/storage';
import { resultFromSummary } from './build-records.js';
import type { SummaryForResult } from './build-records.js';
import { summaryFromEarlierFile } from './earlier-summary-text.js';

/**
 * Completes scan `scanId` (accepted, still `queued`, not enqueued) from the published result of
 * the completed scan `fromId`: its artifacts are hard-linked into a staging folder, a summary of
 * this scan's own is written beside them, the folder is published by one rename, and the state
 * becomes `completed` with `cached_from`. Nothing is counted or read but the earlier summary.
 * Rejects when the earlier result is gone (deleted or expired meanwhile): the caller then runs
 * the scan as usual; this scan's staging is removed whatever happens.
 */
export async function completeFromEarlierScan(
  store: ScanStore,
  fromId: string,
  scanId: string,
  now: () => Date = () => new Date(),
): Promise<ScanStateRecord> {
  const state = await store.readState(scanId);
  if (state === null) throw new Error(`completeFromEarlierScan: scan ${scanId} does not exist`);
  const staging = await store.createStaging(scanId, 0);
  let written: { summary: SummaryForResult; bytes: Buffer };
  try {
    await store.linkPublished(fromId, staging.outDir);
    // Our own published file, of the same version (part of the key): not validated again.
    const earlier = await readFile(store.resultFile(fromId, 'summary.json'));
    written = summaryFromEarlierFile(earlier, fromId, scanId, state.created_at, now().toISOString());
    await writeFile(join(staging.outDir, 'summary.json'), written.bytes, { flag: 'wx' });
    await store.publish(scanId, staging.outDir);
  } finally {
    await store.removeStaging(staging.dir).catch(() => {});
  }
  const { summary } = written;
  const result = resultFromSummary(summary, artifactDirRelative(scanId));
  const files = summary.summary.total_files;
  return await store.updateState(scanId, (s) => ({
    ...s,
    state: 'completed',
    started_at: summary.completed_at,
    completed_at: summary.completed_at,
    progress: { phase: 'done', files_done: files, files_total: files },
    error: null,
    result,
  }));
}
