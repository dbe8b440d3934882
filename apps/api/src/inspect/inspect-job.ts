import type { ScanRequestRecord, ScanOptions } from '@reposcan/contracts';
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
