import { hash } from 'node:crypto';
import { mayCarry } from '@reposcan/core';
import type { CarriedScan, EarlierScan, ScanReport } from '@reposcan/core';
import type { ScanOptions } from '@reposcan/contracts';
import type { Logger } from '@reposcan/runtime';
import type { CloneListing, PreparedSource } from '@reposcan/sources';
import type { CarriedScans, CommitCacheMaterial, ScanStore } from '@reposcan/storage';

/** Bumped when what is kept changes meaning without a version change. */
const KEPT_FORMAT = 1;

/** What a scan keeps for the next commit's scan: core's CarriedScan, and its tree as git listed it. */
interface Kept extends CarriedScan {
  format: number;
  commit: string;
  /** Each regular file's blob id, by path. */
  blobs: Record<string, string>;
  /** The rest of the tree (shapeOf). */
  shape: string;
}

/** The newest earlier scan of the line, and what it kept. */
interface Found {
  scanId: string;
  kept: Kept;
}

/**
 * One remote scan's use of carried outputs (core's carryForward). While the clone runs, it looks
 * for the newest earlier scan of the same line (CarriedScans); shown the clone's tree, it plans
 * the carry when that scan's tree differs only in the contents of regular files it showed as
 * texts: the clone then leaves every unchanged file on the server, so the engine must carry or
 * refuse (the scan is then made again as usual). After a completed scan, it keeps what the next
 * one needs. Whole repositories only, with the options the file cache serves
 * (FileReuseSession.applies), whole outputs and no ZIP bundle. A failure here only costs speed,
 * never the scan.
 */
export class OutputCarry {
  private found: Promise<Found | null> | null = null;
  private planned: (Found & { changed: Set<string> }) | null = null;
  private refused = false;

  constructor(
    private readonly scans: CarriedScans,
    private readonly store: Pick<ScanStore, 'resultFile'>,
    private readonly log: Logger,
  ) {}

  static applies(options: Pick<ScanOptions, 'max_tokens_per_part' | 'create_zip'>): boolean {
    return (options.max_tokens_per_part ?? null) === null && options.create_zip !== true;
  }

  /** Starts looking for the earlier scan of `material`'s line (its commit as the remote advertised it). */
  look(material: CommitCacheMaterial): void {
    if (material.identity.subdir !== null || this.refused) return;
    const { commit } = material.identity;
    this.found = this.scans.find(material).then(
      (found) => {
        const kept = found?.carry as Kept | undefined;
        return found && kept?.format === KEPT_FORMAT && kept.commit !== commit ? { scanId: found.scanId, kept } : null;
      },
      (error: unknown) => {
        this.log.warn({ err: error }, 'carried outputs unavailable; this scan writes all of its outputs');
        return null;
      },
    );
  }

  /**
   * For the clone (CloneRemoteOptions.leaveOnServer): when the earlier scan's tree differs from
   * `listing` only in the contents of files whose outputs can be carried, the unchanged regular
   * files to leave on the server; else undefined.
   */
  async plan(listing: CloneListing): Promise<ReadonlyMap<string, number> | undefined> {
    const found = await this.found;
    const shape = shapeOf(listing);
    if (!found || this.refused || shape === null || shape !== found.kept.shape) return undefined;
    const { blobs } = found.kept;
    const changed = new Set<string>();
    const unchanged = new Map<string, number>();
    const sizes = new Map([...found.kept.files, ...found.kept.assets].map((f) => [f.path, f.size_bytes]));
    for (const [path, blob] of listing.blobs)
      if (Object.hasOwn(blobs, path) && blobs[path] === blob) unchanged.set(path, sizes.get(path) ?? 0);
      else changed.add(path);
    if (!mayCarry(found.kept.files, changed)) return undefined;
    this.planned = { ...found, changed };
    return unchanged;
  }

  /** The earlier scan the engine is to carry forward: the one the clone was planned for, or undefined. */
  earlier(): EarlierScan | undefined {
    if (this.planned === null) return undefined;
    const { scanId, kept, changed } = this.planned;
    const { format: _format, commit: _commit, blobs: _blobs, shape: _shape, ...carried } = kept;
    return {
      ...carried,
      changed,
      outputs: {
        txt: this.store.resultFile(scanId, 'output.txt'),
        md: this.store.resultFile(scanId, 'output.md'),
        json: this.store.resultFile(scanId, 'output.json'),
      },
      fallback: 'refuse',
    };
  }

  /** The engine refused the carry: nothing is planned from now on. */
  refuse(): void {
    this.refused = true;
    this.planned = null;
  }

  /** After a completed scan whose report has its layout: kept for the next commit's scan. */
  async record(
    scanId: string,
    material: CommitCacheMaterial,
    prepared: PreparedSource,
    report: ScanReport,
  ): Promise<void> {
    const { blobs, git, sourceSkips } = prepared;
    if (blobs === undefined || git === undefined) return;
    const shape = shapeOf({ blobs, tracked: git.tracked, skips: sourceSkips ?? new Map() });
    if (shape === null || report.layout === undefined || material.identity.subdir !== null) return;
    const kept: Kept = {
      format: KEPT_FORMAT,
      tree: report.tree,
      files: report.files,
      assets: report.assets,
      skipped: report.skipped,
      secrets: report.secrets ?? null,
      layout: report.layout,
      commit: material.identity.commit,
      blobs: Object.fromEntries(blobs),
      shape,
    };
    await this.scans
      .record(scanId, material, kept)
      .catch((error: unknown) =>
        this.log.warn({ err: error, scanId }, 'could not keep the outputs for the next commit'),
      );
  }
}

/**
 * A hash of a clone's tree but for its regular files' contents (its paths, links and submodules):
 * equal or not is all a rescan asks. Null when some path is neither a regular file with a blob id
 * nor skipped (a name the scan shows quoted: not UTF-8, or starting with `"`): its content could
 * change unseen.
 */
function shapeOf({ blobs, tracked, skips }: CloneListing): string | null {
  for (const path of tracked) if (!blobs.has(path) && !skips.has(path)) return null;
  return hash('sha256', JSON.stringify([tracked, [...skips]]), 'hex');
}
