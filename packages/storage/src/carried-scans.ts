import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isScanId } from '@reposcan/contracts';
import { writeFileAtomic } from './atomic-write.js';
import { commitCacheFolder, commitCacheKey } from './commit-cache.js';
import type { CommitCacheMaterial } from './commit-cache.js';
import { CARRY_FILE } from './scan-paths.js';
import type { ScanStore } from './scan-store.js';

/**
 * The newest completed scan of each line of a repository (the commit cache's key without the
 * commit: the same URL, branch, folder, options and server settings), with what a scan of a
 * later commit needs to carry its outputs forward, kept as `carry.json` in its folder.
 * `commit-cache/v1/<repository key>/<line key>.line` names the scan. Like a commit cache entry it
 * is only a hint: believed while that scan exists, is completed and holds the same line key, so a
 * deleted or expired scan is never read, and its folder goes with its scan.
 */
export class CarriedScans {
  constructor(private readonly store: ScanStore) {}

  /** Keeps `carry` with the scan and points its line at it; best effort for the caller. */
  async record(scanId: string, material: CommitCacheMaterial, carry: unknown): Promise<void> {
    const key = lineKey(material);
    await writeFileAtomic(join(this.store.scanDir(scanId), CARRY_FILE), JSON.stringify({ key, carry }));
    const folder = commitCacheFolder(this.store.dataDir, material.identity.url);
    await mkdir(folder, { recursive: true });
    await writeFileAtomic(join(folder, `${key}.line`), `${scanId}\n`);
  }

  /** The newest completed scan of `material`'s line and what it kept, or null. */
  async find(material: CommitCacheMaterial): Promise<{ scanId: string; carry: unknown } | null> {
    const key = lineKey(material);
    const entry = join(commitCacheFolder(this.store.dataDir, material.identity.url), `${key}.line`);
    const scanId = (await readFile(entry, 'utf8').catch(() => '')).trim();
    if (!isScanId(scanId)) return null;
    const state = await this.store.readState(scanId).catch(() => null);
    if (state?.state !== 'completed') return null;
    try {
      const text = await readFile(join(this.store.scanDir(scanId), CARRY_FILE), 'utf8');
      const kept = JSON.parse(text) as { key?: unknown; carry?: unknown };
      return kept.key === key ? { scanId, carry: kept.carry } : null;
    } catch {
      return null;
    }
  }
}

/** The commit cache's key with the commit left out. */
function lineKey(material: CommitCacheMaterial): string {
  return commitCacheKey({ ...material, identity: { ...material.identity, commit: '' } });
}
