import type { ScanOptions, ScanRequestRecord, TokenEncoding } from '@reposcan/contracts';
import { parseRepoPath, resolveRemoteCommit } from '@reposcan/sources';
import type { ResolvedRef, SourceSettings } from '@reposcan/sources';
import type { CommitCache, CommitCacheMaterial } from '@reposcan/storage';

export interface ResultReuseDeps {
  cache: CommitCache;
  settings: SourceSettings;
  encoding: TokenEncoding;
  /** The reposcan version and the limits that shape outputs (runtime's commitCacheSettings). */
  keySettings: CommitCacheMaterial['settings'];
  /** Budget of the `ls-remote`; past it the scan is simply queued. */
  timeoutMs?: number;
}

/** What a lookup learnt: the commit the ref names now (its key), and a completed scan of it, if any. */
export interface CommitLookup {
  material: CommitCacheMaterial;
  fromScanId: string | null;
}

/** A completed scan that an accepted request may take its result from. */
export type ReusableResult = CommitLookup & { fromScanId: string };

/** An `ls-remote` answers in well under a second; one that takes longer is not worth waiting on. */
const LS_REMOTE_TIMEOUT_MS = 10_000;

/** The ref a lookup resolved, as a queued scan's request keeps it for its worker. */
export function resolvedRef({ material }: CommitLookup): ResolvedRef {
  const { branch, commit, subdir } = material.identity;
  return { branch, commit, subdir };
}

/**
 * Finds, at submit, a completed scan of the same repository, commit and options (the commit
 * cache, docs/architecture.md). It runs `git ls-remote` with the credential the clone would use:
 * only when that succeeds (so the caller can read the repository) and names a commit some scan
 * has already scanned is an earlier result reused; otherwise what it resolved goes with the
 * queued scan. Any failure here only means no reuse: the scan is queued and fails, if it must, as
 * it always did.
 */
export class ResultReuse {
  constructor(private readonly deps: ResultReuseDeps) {}

  async find(
    source: Extract<ScanRequestRecord['source'], { type: 'remote' }>,
    options: ScanOptions,
    gitToken: string | undefined,
    signal?: AbortSignal,
  ): Promise<CommitLookup | null> {
    const { cache, settings } = this.deps;
    try {
      // A repository nobody scanned here has nothing to reuse: no ls-remote is run for it.
      const parsed = parseRepoPath(source.repo_path);
      if (parsed.kind !== 'remote' || !(await cache.knowsRepository(parsed.url.webUrl))) return null;
      // A change digest's base is part of what it shows: its commit is read from the same listing.
      const identity = await resolveRemoteCommit(source, {
        settings,
        gitToken: gitToken ?? null,
        timeoutMs: Math.min(settings.cloneTimeoutMs, this.deps.timeoutMs ?? LS_REMOTE_TIMEOUT_MS),
        baseRef: options.base_ref ?? null,
        ...(signal ? { signal } : {}),
      });
      if (identity === null) return null;
      const material: CommitCacheMaterial = {
        identity,
        options,
        encoding: this.deps.encoding,
        settings: this.deps.keySettings,
      };
      return { material, fromScanId: await cache.find(material) };
    } catch {
      return null;
    }
  }

  /** Points the cache at a newer scan with the same result; best effort. */
  async record(scanId: string, material: CommitCacheMaterial): Promise<void> {
    await this.deps.cache.record(scanId, material).catch(() => {});
  }
}
