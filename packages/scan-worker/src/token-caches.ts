import type { TokenEncodingName } from '@reposcan/core';
import { VolumeTokenCache } from '@reposcan/storage';
import type { ScanStore } from '@reposcan/storage';
import type { Logger } from '@reposcan/runtime';

/**
 * One token cache per encoding for the whole worker process, on the shared volume, so every
 * worker learns from every other's scans. A cache that cannot be read or written only costs
 * speed: a scan never fails because of it.
 */
export class TokenCaches {
  private readonly caches = new Map<TokenEncodingName, Promise<VolumeTokenCache>>();

  constructor(
    private readonly store: ScanStore,
    private readonly maxEntries: number,
    private readonly log: Logger,
  ) {}

  /** The cache of `encoding` with every segment written so far loaded, or null when the cache is off or unusable. */
  async forScan(encoding: TokenEncodingName): Promise<VolumeTokenCache | null> {
    if (this.maxEntries === 0) return null;
    let opening = this.caches.get(encoding);
    if (!opening) {
      opening = VolumeTokenCache.open(this.store.tokenCacheDir(encoding), { maxEntries: this.maxEntries });
      this.caches.set(encoding, opening);
      opening.catch(() => this.caches.delete(encoding));
    }
    try {
      const cache = await opening;
      await cache.sync();
      return cache;
    } catch (error) {
      this.log.warn({ err: error, encoding }, 'token cache unavailable; this scan counts every file');
      return null;
    }
  }

  /** Writes what a scan learnt; failures are logged, never thrown. */
  async flush(cache: VolumeTokenCache | null): Promise<void> {
    await cache?.flush().catch((error: unknown) => this.log.warn({ err: error }, 'token cache: could not save counts'));
  }
}
