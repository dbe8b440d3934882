import type { ScanOptions } from '@reposcan/core';
import type { Selection } from '../cli-args.js';

/** The command line's selection as the engine's options (lite and zip off; scans set them). */
export function engineOptions(s: Selection): ScanOptions {
  return {
    excludeDirs: s.excludeDirs,
    includePatterns: s.includePatterns,
    excludePatterns: s.excludePatterns,
    lite: false,
    createZip: false,
    treeDepth: s.treeDepth,
    docsOnly: s.docsOnly,
    syncIgnore: s.syncIgnore,
    skipTree: s.skipTree,
    sizeLimit: s.sizeLimit,
  };
}
