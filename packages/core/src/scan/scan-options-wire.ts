import type { ScanOptions } from '../types.js';

/** The options as applied, in the API's snake_case spelling (summary records, summary.json). */
export interface WireScanOptions {
  exclude_dirs: string[];
  include_patterns: string[];
  exclude_patterns: string[];
  lite: boolean;
  create_zip: boolean;
  tree_depth: number | null;
  docs_only: boolean;
  sync_ignore: boolean;
  skip_tree: boolean;
  size_limit: number | null;
}

export function scanOptionsToWire(o: ScanOptions): WireScanOptions {
  return {
    exclude_dirs: o.excludeDirs,
    include_patterns: o.includePatterns,
    exclude_patterns: o.excludePatterns,
    lite: o.lite,
    create_zip: o.createZip,
    tree_depth: o.treeDepth,
    docs_only: o.docsOnly,
    sync_ignore: o.syncIgnore,
    skip_tree: o.skipTree,
    size_limit: o.sizeLimit,
  };
}
