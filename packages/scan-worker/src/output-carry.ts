import { hash } from 'node:crypto';
import type { EarlierScan, ScanReport } from '@reposcan/core';
import type { ScanOptions } from '@reposcan/contracts';
import type { Logger } from '@reposcan/runtime';
import type { PreparedSource } from '@reposcan/sources';
import type { CarriedScans, CommitCacheMaterial, ScanStore } from '@reposcan/storage';

/** Bumped when what is kept changes meaning without a version change. */
const KEPT_FORMAT = 1;

/** What a scan keeps for the next commit's scan: core's CarriedScan, and its tree as git listed it. */
interface Kept extends Omit<EarlierScan, 'changed' | 'outputs'> {
  format: number;
  commit: string;
  /** Each regular file's blob id, by path. */
  blobs: Record<string, string>;
  /** Every other entry of the tree (paths, links, submodules), hashed: equal or not is all a rescan asks. */
  shape: string;
}

/**
 * One remote scan's use of carried outputs (core's carryForward): before the engine runs, the
 * newest earlier scan of the same line (CarriedScans) whose tree differs from this clone's only in
 * the contents of some regular files; after a completed scan, what the next one needs. Whole
 * repositories only, with the options the file cache serves (FileReuseSession.applies), whole
 * outputs and no ZIP bundle. A failure here only costs speed, never the scan.
 */
export class OutputCarry {
  constructor(
    private readonly scans: CarriedScans,
    private readonly store: Pick<ScanStore, 'resultFile'>,
    private readonly log: Logger,
  ) {}

  static applies(options: Pick<ScanOptions, 'max_tokens_per_part' | 'create_zip'>): boolean {
    return (options.max_tokens_per_part ?? null) === null && options.create_zip !== true;
  }

  /** The earlier scan this one may carry forward, or undefined. */
  async earlier(material: CommitCacheMaterial, prepared: PreparedSource): Promise<EarlierScan | undefined> {
    if (material.identity.subdir !== null) return undefined;
    const listing = listingOf(prepared);
    if (listing === null) return undefined;
    try {
      const found = await this.scans.find(material);
      if (found === null) return undefined;
      const kept = found.carry as Kept;
      if (kept.format !== KEPT_FORMAT || kept.shape !== listing.shape || kept.commit === material.identity.commit)
        return undefined;
      const changed = new Set<string>();
      for (const [path, blob] of listing.blobs)
        if (!Object.hasOwn(kept.blobs, path) || kept.blobs[path] !== blob) changed.add(path);
      const { format: _format, commit: _commit, blobs: _blobs, shape: _shape, ...carried } = kept;
      return {
        ...carried,
        changed,
        outputs: {
          txt: this.store.resultFile(found.scanId, 'output.txt'),
          md: this.store.resultFile(found.scanId, 'output.md'),
          json: this.store.resultFile(found.scanId, 'output.json'),
        },
      };
    } catch (error) {
      this.log.warn({ err: error }, 'carried outputs unavailable; this scan writes all of its outputs');
      return undefined;
    }
  }

  /** After a completed scan whose report has its layout: kept for the next commit's scan. */
  async record(
    scanId: string,
    material: CommitCacheMaterial,
    prepared: PreparedSource,
    report: ScanReport,
  ): Promise<void> {
    const listing = listingOf(prepared);
    if (listing === null || report.layout === undefined || material.identity.subdir !== null) return;
    const kept: Kept = {
      format: KEPT_FORMAT,
      tree: report.tree,
      files: report.files,
      assets: report.assets,
      skipped: report.skipped,
      secrets: report.secrets ?? null,
      layout: report.layout,
      commit: material.identity.commit,
      blobs: Object.fromEntries(listing.blobs),
      shape: listing.shape,
    };
    await this.scans
      .record(scanId, material, kept)
      .catch((error: unknown) =>
        this.log.warn({ err: error, scanId }, 'could not keep the outputs for the next commit'),
      );
  }
}

/**
 * A clone's regular files by blob id, and a hash of the rest of its tree; null when some path is
 * neither (git quoted it): its content could change unseen.
 */
function listingOf(prepared: PreparedSource): { blobs: ReadonlyMap<string, string>; shape: string } | null {
  const { blobs, git, sourceSkips } = prepared;
  if (blobs === undefined || git === undefined) return null;
  const skips = sourceSkips ?? new Map<string, string>();
  for (const path of git.tracked) if (!blobs.has(path) && !skips.has(path)) return null;
  return { blobs, shape: hash('sha256', JSON.stringify([git.tracked, [...skips]]), 'hex') };
}
