import { createHash } from 'node:crypto';
import { lstat, mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { defaultValue, isScanId, SCAN_OPTION_NAMES } from '@reposcan/contracts';
import type { ScanOptions, TokenEncoding } from '@reposcan/contracts';
import { writeFileAtomic } from './atomic-write.js';
import { readdirOrEmpty } from './fs-errors.js';
import { COMMIT_CACHE_DIR, COMMIT_KEY_FILE } from './scan-paths.js';
import type { ScanStore } from './scan-store.js';

/** What a remote scan scanned, once its ref is resolved: everything of the source its outputs show. */
export interface CommitIdentity {
  /** The repository's web URL (parseRepoPath's normal form: one spelling per repository). */
  url: string;
  hostFamily: string | null;
  repoName: string;
  branch: string;
  commit: string;
  /** The folder the URL names (before a file link is turned into its folder); null for the whole tree. */
  subdir: string | null;
  /**
   * The commit a change digest's `base_ref` named (a branch or tag moves: the name alone, in the
   * options, does not say which diff was taken); null for a scan that is not a digest.
   */
  baseCommit: string | null;
}

/**
 * Everything that decides a remote scan's artifacts. Two scans with the same material write the
 * same bytes, so the later one may take the earlier one's. The request's git token is not part
 * of it: access is proven per request (docs/architecture.md, the commit cache).
 */
export interface CommitCacheMaterial {
  identity: CommitIdentity;
  /** Every option of the scan option table: new rows are part of the key without a change here. */
  options: ScanOptions;
  encoding: TokenEncoding;
  /** The reposcan version and the server settings that shape outputs (limits), from runtime's commitCacheSettings. */
  settings: Readonly<Record<string, string | number | boolean | null>>;
}

/** Bumped when what a scan writes changes without a version change, so no older result is served. */
const KEY_FORMAT = 2;

/** The repository folders' own format: the file cache lives under them too, and its texts outlast output changes. */
const REPOSITORY_KEY_FORMAT = 1;

/** `sha256` of the repository URL: the folder every key of one repository lives in. */
export function repositoryKey(url: string): string {
  return sha256(`${REPOSITORY_KEY_FORMAT}\0${url}`);
}

/** `commit-cache/v1/<repository key>`: the folder of one repository's entries in the commit cache's index. */
export function commitCacheFolder(dataDir: string, url: string): string {
  return join(dataDir, COMMIT_CACHE_DIR, repositoryKey(url));
}

/** The key of a result: a SHA-256 over the material in a fixed order (options in the table's order, settings sorted). */
export function commitCacheKey(material: CommitCacheMaterial): string {
  const { identity, options, encoding, settings } = material;
  const optionValues = SCAN_OPTION_NAMES.map((name) => [name, options[name] ?? defaultValue(name)]);
  const settingValues = Object.keys(settings)
    .sort()
    .map((name) => [name, settings[name]]);
  return sha256(
    JSON.stringify([
      KEY_FORMAT,
      [
        identity.url,
        identity.hostFamily,
        identity.repoName,
        identity.branch,
        identity.commit,
        identity.subdir,
        identity.baseCommit,
      ],
      optionValues,
      encoding,
      settingValues,
    ]),
  );
}

/**
 * The commit cache's index on the volume: `commit-cache/v1/<repository key>/<key>` holds the id
 * of a completed scan with that key, and that scan's folder holds the key as `commit-key`. An
 * entry is only a hint: `find` believes it only when the scan still exists, is completed and
 * names the same key, so a deleted, expired or half-written scan is never served, and the
 * volume stays the truth without locks.
 */
export class CommitCache {
  constructor(private readonly store: ScanStore) {}

  private root(): string {
    return join(this.store.dataDir, COMMIT_CACHE_DIR);
  }

  /** Whether any result of this repository was ever recorded: without one, no `ls-remote` is worth running. */
  async knowsRepository(url: string): Promise<boolean> {
    return lstat(commitCacheFolder(this.store.dataDir, url)).then(
      (s) => s.isDirectory(),
      () => false,
    );
  }

  /** The completed scan recorded under this material, or null (none, or the entry is stale). */
  async find(material: CommitCacheMaterial): Promise<string | null> {
    const key = commitCacheKey(material);
    const entry = join(commitCacheFolder(this.store.dataDir, material.identity.url), key);
    const scanId = (await readFile(entry, 'utf8').catch(() => '')).trim();
    if (!isScanId(scanId)) return null;
    return (await this.holds(scanId, key)) ? scanId : null;
  }

  /**
   * Records a completed scan under its material: its folder gets the key, the index points at it
   * (the newest scan, so the entry outlives older ones that expire first). Best effort for the
   * caller: a failure only means a later scan is not served from this one.
   */
  async record(scanId: string, material: CommitCacheMaterial): Promise<void> {
    const key = commitCacheKey(material);
    await writeFileAtomic(join(this.store.scanDir(scanId), COMMIT_KEY_FILE), `${key}\n`);
    const folder = commitCacheFolder(this.store.dataDir, material.identity.url);
    await mkdir(folder, { recursive: true });
    await writeFileAtomic(join(folder, key), `${scanId}\n`);
  }

  /** Removes index entries whose scan is gone or no longer holds the key (the janitor); returns how many. */
  async sweep(): Promise<number> {
    let removed = 0;
    const repos = await readdirOrEmpty(this.root());
    for (const repo of repos) {
      if (!/^[0-9a-f]{64}$/.test(repo)) continue;
      const folder = join(this.root(), repo);
      const keys = await readdir(folder).catch(() => []);
      let left = 0;
      for (const key of keys) {
        if (!/^[0-9a-f]{64}$/.test(key)) continue; // a temp file of a write in progress
        const scanId = (await readFile(join(folder, key), 'utf8').catch(() => '')).trim();
        if (isScanId(scanId) && (await this.holds(scanId, key))) left++;
        else {
          await rm(join(folder, key), { force: true });
          removed++;
        }
      }
      // An empty folder goes too; a writer that made it a moment ago makes it again (mkdir -p, then write).
      if (left === 0 && keys.length > 0) await rm(folder, { recursive: true, force: true }).catch(() => {});
    }
    return removed;
  }

  /** The scan is completed and carries `key`. */
  private async holds(scanId: string, key: string): Promise<boolean> {
    const state = await this.store.readState(scanId).catch(() => null);
    if (state?.state !== 'completed') return false;
    const own = await readFile(join(this.store.scanDir(scanId), COMMIT_KEY_FILE), 'utf8').catch(() => '');
    return own.trim() === key;
  }
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
