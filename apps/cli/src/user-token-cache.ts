import { join } from 'node:path';
import type { TokenCache, TokenCacheStats } from '@reposcan/core';
import type { TokenEncoding } from './cli-args.js';

/**
 * Entries kept per encoding (20 bytes each on disk: 4 MB at most). Counts are keyed by content,
 * so this covers a few hundred thousand distinct files, far more than a user rescans.
 */
export const USER_TOKEN_CACHE_ENTRIES = 200_000;

export interface UserTokenCache {
  cache: TokenCache;
  stats: TokenCacheStats;
  /** Writes what this run learnt, then trims the folder to its cap. Never throws: a cache is optional. */
  save(): Promise<void>;
}

/**
 * The --local token cache: the server's volume token cache format (packages/storage), one folder
 * per encoding under `<cacheRoot>/tokens/`. A repeat scan counts only files whose content changed.
 * Returns null when the folder cannot be used (read-only home …): the scan counts everything.
 */
export async function openUserTokenCache(
  cacheRoot: string,
  encoding: TokenEncoding,
  maxEntries = USER_TOKEN_CACHE_ENTRIES,
): Promise<UserTokenCache | null> {
  const { VolumeTokenCache, compactTokenCache } = await import('@reposcan/storage/token-cache');
  const dir = join(cacheRoot, 'tokens', encoding);
  let cache: Awaited<ReturnType<typeof VolumeTokenCache.open>>;
  try {
    cache = await VolumeTokenCache.open(dir, { maxEntries });
    await cache.sync();
  } catch {
    return null;
  }
  const stats: TokenCacheStats = { hits: 0, misses: 0 };
  return {
    cache,
    stats,
    async save() {
      try {
        await cache.flush();
        // Few segments stay as they are; past 8 (or the cap) they merge into one of the newest entries.
        await compactTokenCache(dir, { maxEntries, maxSegments: 8 });
      } catch {
        // A cache that cannot be written costs the next run its counting, nothing more.
      }
    },
  };
}
