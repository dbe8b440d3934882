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
