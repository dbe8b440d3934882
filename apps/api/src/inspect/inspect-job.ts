import type { InspectResult, ScanRequestRecord, ScanOptions } from '@reposcan/contracts';
import type { EngineLimits } from '@reposcan/core';
import type { SourceSettings } from '@reposcan/sources';

/** What the API hands an inspect thread: plain data only. */
export interface InspectJob {
  source: ScanRequestRecord['source'];
  options: ScanOptions;
  settings: SourceSettings;
  limits: EngineLimits;
  /** Temporary folder outside DATA_DIR, removed by the caller. */
  workDir: string;
}

export type InspectOutcome = { ok: true; data: InspectResult } | { ok: false; error: { name: string; code?: string; message: string } };

/** What the service posts to an inspect thread: a job, perhaps 'abort' while it runs, later the next job. */
export type InspectThreadMessage = { job: InspectJob } | 'abort';
