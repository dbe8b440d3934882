import type { ScanOptions as WireOptions } from '@reposcan/contracts';
import type { ScanOptions } from '@reposcan/core';

/** The API's snake_case options as the engine's camelCase ones. */
export function toEngineOptions(o: WireOptions): ScanOptions {
  return {
    excludeDirs: o.exclude_dirs,
    includePatterns: o.include_patterns,
    excludePatterns: o.exclude_patterns,
    lite: o.lite,
    createZip: o.create_zip,
    treeDepth: o.tree_depth,
    docsOnly: o.docs_only,
    syncIgnore: o.sync_ignore,
    skipTree: o.skip_tree,
    sizeLimit: o.size_limit,
  };
}
