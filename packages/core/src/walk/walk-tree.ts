// The directory walk: which files of a repository are scanned, in output order, and why every
// other path was left out. Folders are listed concurrently, ahead of need; the output is then
// assembled depth-first in a fixed order, so the result never depends on timing.
import { isDocsPath } from '../classify/classify-by-name.js';
import { shownPath } from '../path-bytes.js';
import type { EngineLimits, ScanOptions, SkippedPath, SkipReason, WalkedFile, WalkResult } from '../types.js';
import { compileDirExcludes } from './dir-excludes.js';
import { indexTracked, type GitWorkTree } from './git-work-tree.js';
import { IoPool } from './io-pool.js';
import { listFolder, type ListedFolder, type SkippedFolder } from './list-folder.js';
import { nodeWalkFs } from './node-walk-fs.js';
import { compilePathPatterns } from './path-patterns.js';
import { openScanRoot, ScanRootError } from './scan-root.js';
import { indexAbsent } from './walk-context.js';
import type { Folder, WalkContext } from './walk-context.js';
import type { WalkDeps } from './walk-deps.js';

export interface WalkInput {
  /**
   * Real path of the repository root (absolute, no link on the way: the walk refuses anything else
   * with ROOT_MOVED). Paths in results are POSIX, relative to this, and shown as shownPath
   * (path-bytes.ts) shows them; `absPath` is carried as path-bytes.ts says.
   */
  root: string;
  /** Optional subfolder of root to scan (POSIX, no leading/trailing slash). Results keep the `subdir/` prefix. Ignore files in root and in the folders between root and subdir still apply. */
  subdir: string | null;
  options: Pick<ScanOptions, 'excludeDirs' | 'includePatterns' | 'excludePatterns' | 'syncIgnore' | 'sizeLimit'>;
  limits: EngineLimits;
  /** docs_only: keep documentation files only (isDocsPath); the others are skipped with reason 'pattern'. */
  docsOnly?: boolean;
  /** Extra per-file filter; files it rejects are skipped with reason 'pattern'. Cannot cross to an io thread. */
  acceptFile?: (relPath: string) => boolean;
  /**
   * What the source knows that the file system does not show, by root-relative POSIX path: a
   * remote clone's links and submodules, which git wrote as small text files and empty folders.
   * The walk skips each entry with its reason after the user's own filters, as it does a link
   * it finds itself, and never reads it as an ignore file.
   */
  sourceSkips?: ReadonlyMap<string, SkipReason>;
  /** When the tree is a git work tree (or a clone): its tracked files and `.git/info/exclude`. */
  git?: GitWorkTree;
  /**
   * Files of the tree that are not on disk, by root-relative POSIX path, with their sizes: a clone
   * left their blobs on the server because the scan takes them from elsewhere (FileReuse) or, in a
   * change digest, does not read them (size 0). The walk lists them, and the folders on the way, as
   * if they were there; it never reads them.
   */
  absent?: ReadonlyMap<string, number>;
}

/** File-system calls in flight at once (libuv runs them on its thread pool). */
const IO_CONCURRENCY = 64;

/**
 * Folders listed ahead of the output with async calls. Enough to keep the file system busy, and
 * few enough that a walk stopped by the file limit has not listed (and held in memory) the rest
 * of a huge tree. Blocking calls list nothing ahead: they cannot overlap, and listing ahead only
 * delayed the first files (a tree with a few large folders was two-thirds listed before its
 * first chunk went out, while the tokenizer threads waited).
 */
const LOOKAHEAD_FOLDERS = 128;

type PendingListed = Omit<ListedFolder, 'subfolders'> & { subfolders: PendingFolder[] };
type PendingListing = PendingListed | SkippedFolder;

/** A folder whose listing starts on first request, ahead of need or when the output reaches it. */
class PendingFolder {
  readonly rel: string;
  readonly #folder: Folder;
  readonly #begin: (folder: Folder) => Promise<PendingListing>;
  #listing: Promise<PendingListing> | null = null;

  constructor(folder: Folder, begin: (folder: Folder) => Promise<PendingListing>) {
    this.rel = folder.rel;
    this.#folder = folder;
    this.#begin = begin;
  }

  get started(): boolean {
    return this.#listing !== null;
  }

  listing(): Promise<PendingListing> {
    this.#listing ??= this.#begin(this.#folder);
    return this.#listing;
  }
}

/**
 * Files handed on in chunks about this big: the scan starts reading before the walk ends. The
 * first chunks are smaller, so the first batch of reads starts as soon as there is one.
 */
const CHUNK_FILES = 256;
const FIRST_CHUNK_FILES = 32;

/** Receives the kept files in output order, a chunk at a time, while the walk goes on. */
export type WalkSink = (files: WalkedFile[]) => void;

/** The walk ran past `limits.walkTimeoutMs` and was stopped: nothing was scanned. */
export class WalkTimeoutError extends Error {
  override readonly name = 'WalkTimeoutError';
  readonly code = 'WALK_TIMEOUT';

  constructor(timeoutMs: number) {
    super(`listing the repository took longer than ${Math.round(timeoutMs / 1000)} s`);
  }
}

/** The walk carries paths as path-bytes.ts says; its results give them as they are shown. */
function shown<T extends { path: string }>(entry: T): T {
  const path = shownPath(entry.path);
  return path === entry.path ? entry : { ...entry, path };
}

function comparePaths(a: SkippedPath, b: SkippedPath): number {
  if (a.path === b.path) return 0;
  return a.path < b.path ? -1 : 1;
}

/** The whole walk at once: kept files in output order and every skipped path. */
export async function walkTree(input: WalkInput, deps: Partial<WalkDeps> = {}): Promise<WalkResult> {
  const files: WalkedFile[] = [];
  const skipped = await walkTreeInto(
    input,
    (chunk) => {
      for (const file of chunk) files.push(file);
    },
    deps,
  );
  return { files, skipped };
}

/**
 * The walk as a stream: kept files go to `sink` in output order as the output reaches them, and
 * the skipped paths, sorted, are the result. A walk that fails rejects; what the sink got before
 * is the caller's to drop.
 */
export async function walkTreeInto(
  input: WalkInput,
  sink: WalkSink,
  deps: Partial<WalkDeps> = {},
): Promise<SkippedPath[]> {
  const { options, limits } = input;
  const ctx: WalkContext = {
    fs: { ...nodeWalkFs, ...deps },
    pool: new IoPool(IO_CONCURRENCY),
    isExcludedDir: compileDirExcludes(options.excludeDirs),
    patterns: compilePathPatterns(options.includePatterns, options.excludePatterns),
    acceptFile: input.acceptFile ?? (input.docsOnly ? isDocsPath : undefined),
    sourceSkips: input.sourceSkips,
    absent: input.absent === undefined || input.absent.size === 0 ? null : indexAbsent(input.absent),
    syncIgnore: options.syncIgnore,
    tracked: input.git === undefined ? null : indexTracked(input.git.tracked),
    maxFileBytes: Math.min(options.sizeLimit ?? Infinity, limits.maxFileBytes),
    maxIgnoreFileBytes: limits.maxFileBytes,
    maxDepth: limits.maxDepth,
    deadline: performance.now() + limits.walkTimeoutMs,
    stopped: false,
  };
  const scanRoot = await openScanRoot(ctx, input.root, input.subdir, input.git?.infoExclude ?? null);
  let kept = 0;
  let chunk: WalkedFile[] = [];
  let chunkFiles = FIRST_CHUNK_FILES;
  const lookahead = ctx.fs.blocking === true ? 0 : LOOKAHEAD_FOLDERS;
  const skipped: SkippedPath[] = scanRoot.problems.map(shown);

  const started: Promise<unknown>[] = [];
  let ahead = 0; // listings started and not yet taken up by the output
  const prefetch = (subfolders: readonly PendingFolder[]): void => {
    const next = subfolders.filter((sub) => !sub.started).slice(0, Math.max(0, lookahead - ahead));
    // Started last to first, so the LIFO pool lists the first sub-folder first.
    for (const sub of next.toReversed()) void sub.listing();
  };
  const begin = (folder: Folder): Promise<PendingListing> => {
    ahead += 1;
    const listing = listFolder(ctx, folder).then((listed): PendingListing => {
      if (listed.kind === 'skipped') return listed;
      const subfolders = listed.subfolders.map((sub) => new PendingFolder(sub, begin));
      prefetch(subfolders);
      return { ...listed, subfolders };
    });
    // Handled at once: a listing that fails while the output is still being assembled elsewhere
    // must not surface as an unhandled rejection; whoever awaits it still gets the error.
    started.push(listing.catch(() => undefined));
    return listing;
  };

  // Depth-first, sub-folders before files. Once a file is over the limit, the folders that
  // follow are not listed but recorded once each, and the files that follow one by one.
  const emit = async (listed: PendingListed): Promise<void> => {
    if (performance.now() > ctx.deadline) throw new WalkTimeoutError(limits.walkTimeoutMs);
    for (const entry of listed.skipped) skipped.push(shown(entry));
    prefetch(listed.subfolders);
    for (const subfolder of listed.subfolders) {
      if (ctx.stopped) {
        skipped.push(shown({ path: `${subfolder.rel}/`, reason: 'limit' }));
        continue;
      }
      const sub = await subfolder.listing();
      ahead -= 1;
      if (sub.kind === 'skipped') skipped.push(shown({ path: `${subfolder.rel}/`, reason: sub.reason }));
      else await emit(sub);
    }
    for (const file of listed.files) {
      if (kept < limits.maxFiles) {
        kept += 1;
        chunk.push(shown(file));
        if (chunk.length >= chunkFiles) {
          sink(chunk);
          chunk = [];
          chunkFiles = Math.min(CHUNK_FILES, chunkFiles * 2);
        }
      } else {
        ctx.stopped = true;
        skipped.push({ path: shownPath(file.path), reason: 'limit' });
      }
    }
  };

  try {
    const root = await begin(scanRoot.folder);
    ahead -= 1;
    if (root.kind === 'skipped') throw new ScanRootError('ROOT_UNREADABLE', 'the scan root cannot be listed');
    await emit(root);
    if (chunk.length > 0) sink(chunk);
  } finally {
    // Abandon what is left and let it settle, so no file-system call outlives the walk.
    ctx.stopped = true;
    for (let i = 0; i < started.length; i += 1) await started[i];
  }
  return skipped.sort(comparePaths);
}
