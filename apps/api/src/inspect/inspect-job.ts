import type { ScanRequestRecord, ScanOptions } from '@reposcan/contracts';
import type { EngineLimits } from '@reposcan/core';
import type { SourceSettings } from '@reposcan/sources';

/** What the API hands an inspect thread: plain data only. */
export interface InspectJob {
  source: ScanRequestRecord['source'];
  options: ScanOptions;
  settings: SourceSettings;
  limits: EngineLimits;
  /** The request's git credential: crosses to the thread in memory only. */
  gitToken: string | null;
  /** Temporary folder outside DATA_DIR, removed by the caller. */
  workDir: string;
}
