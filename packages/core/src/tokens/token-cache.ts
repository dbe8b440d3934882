import { hash } from 'node:crypto';
import { TOKEN_KEY_BYTES } from './token-table.js';
import type { CountTokens } from './token-pool.js';

/**
 * Token counts already known, by content. A count depends only on the bytes counted and the
 * encoding, so a cache of one encoding serves every scan, every repository and every worker.
 */
export interface TokenCache {
  /** The count recorded for `key` (see tokenCacheKey). A hit may be remembered as recently used. */
  get(key: Uint8Array): number | undefined;
  /** Records a count learnt by counting. */
  set(key: Uint8Array, tokens: number): void;
}

export interface TokenCacheStats {
  hits: number;
  misses: number;
}

/** The key of some content: the first 16 bytes of the SHA-256 of exactly the bytes counted. */
export function tokenCacheKey(content: Uint8Array): Uint8Array {
  return hash('sha256', content, 'buffer').subarray(0, TOKEN_KEY_BYTES);
}

/**
 * `count` behind `cache`: only contents the cache does not know are counted, and what they
 * count is recorded. Same answers as `count` alone, in the same order.
 */
export function withTokenCache(
  count: CountTokens,
  cache: TokenCache,
  stats: TokenCacheStats = { hits: 0, misses: 0 },
): CountTokens {
  return async (contents, signal) => {
    const counts = new Array<number>(contents.length);
    const missing: number[] = [];
    const keys: Uint8Array[] = [];
    for (let i = 0; i < contents.length; i++) {
      const key = tokenCacheKey(contents[i] as Uint8Array);
      const known = cache.get(key);
      if (known === undefined) {
        missing.push(i);
        keys.push(key);
      } else {
        counts[i] = known;
      }
    }
    stats.hits += contents.length - missing.length;
    stats.misses += missing.length;
    if (missing.length > 0) {
      const fresh = await count(
        missing.map((i) => contents[i] as Uint8Array),
        signal,
      );
      for (let m = 0; m < missing.length; m++) {
        const tokens = fresh[m] as number;
        counts[missing[m] as number] = tokens;
        cache.set(keys[m] as Uint8Array, tokens);
      }
    }
    return counts;
  };
}
