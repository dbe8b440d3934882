import type { Config } from '@reposcan/config';
import type { EngineLimits } from '@reposcan/core';

/** The engine's limits from the configuration: the same for a scan on a worker and a preview on the API. */
export function engineLimitsFromConfig(c: Config): EngineLimits {
  return {
    maxFiles: c.maxScanFiles,
    maxDepth: c.maxPathDepth,
    maxFileBytes: c.maxFileBytes,
    walkTimeoutMs: c.walkTimeoutSeconds * 1000,
  };
}

/**
 * The server's part of a commit cache key (storage's CommitCacheMaterial): the version, and every
 * setting that changes what a scan of the same commit and options writes. The walk's timeout is
 * not one (past it the scan fails); MAX_FILE_BYTES is also the largest blob a clone fetches.
 */
export function commitCacheSettings(c: Config): Record<string, string | number> {
  return {
    version: c.version,
    maxFiles: c.maxScanFiles,
    maxDepth: c.maxPathDepth,
    maxFileBytes: c.maxFileBytes,
  };
}
