// Settings and services shared by every folder listing of one walk.
import type { SkipReason } from '../types.js';
import type { DirExcluder } from './dir-excludes.js';
import type { TrackedPaths } from './git-work-tree.js';
import type { IgnoreStack } from './ignore-stack.js';
import type { IoPool } from './io-pool.js';
import type { PathPatterns } from './path-patterns.js';
import type { WalkDeps } from './walk-deps.js';

export interface WalkContext {
  readonly fs: WalkDeps;
  readonly pool: IoPool;
  readonly isExcludedDir: DirExcluder;
  readonly patterns: PathPatterns;
  readonly acceptFile: ((relPath: string) => boolean) | undefined;
  /** Entries skipped for what the source says they are (WalkInput.sourceSkips). */
  readonly sourceSkips: ReadonlyMap<string, SkipReason> | undefined;
  readonly syncIgnore: boolean;
  /** Files of the tree that are not on disk (WalkInput.absent), by folder. */
  readonly absent: AbsentFolders | null;
  /** The files git tracks, when the tree is a git work tree: git's ignore rules pass them. */
  readonly tracked: TrackedPaths | null;
  /** Files larger than this are skipped `too_large`: min(size_limit, the engine's per-file limit). */
  readonly maxFileBytes: number;
  /** Ignore files larger than this are not applied: the engine's per-file limit. */
  readonly maxIgnoreFileBytes: number;
  readonly maxDepth: number;
  /** performance.now() past which the walk gives up (checked per folder). */
  readonly deadline: number;
  /** Set once the file limit is reached: listings not yet started are abandoned. */
  stopped: boolean;
}

/** A folder to list. */
export interface Folder {
  /** Root-relative POSIX path, `''` for the repository root. */
  readonly rel: string;
  readonly abs: string;
  /** Levels below the scan root. */
  readonly depth: number;
  /** Ignore rules of the folders above, as seen from this one. */
  readonly ignores: IgnoreStack;
  /** Git ignores this folder (or one above) but tracks files in it: only those are listed. */
  readonly gitIgnored: boolean;
}

/** What a folder holds that is not on disk: files with their sizes, and folders on the way to such files. */
export interface AbsentEntries {
  readonly files: Map<string, number>;
  readonly folders: Set<string>;
}

/** Root-relative folder path (`''` for the root) → its absent entries. */
export type AbsentFolders = ReadonlyMap<string, AbsentEntries>;

/** Indexes WalkInput.absent by folder, every folder on the way included. */
export function indexAbsent(absent: ReadonlyMap<string, number>): AbsentFolders {
  const folders = new Map<string, AbsentEntries>();
  const entriesOf = (rel: string): AbsentEntries => {
    let entries = folders.get(rel);
    if (entries === undefined) folders.set(rel, (entries = { files: new Map(), folders: new Set() }));
    return entries;
  };
  for (const [path, size] of absent) {
    const segments = path.split('/');
    const name = segments.pop() as string;
    entriesOf(segments.join('/')).files.set(name, size);
    // Upwards until a folder already listed: the ones above it were listed with it.
    for (let depth = segments.length; depth > 0; depth--) {
      const parent = entriesOf(segments.slice(0, depth - 1).join('/'));
      const folder = segments[depth - 1] as string;
      if (parent.folders.has(folder)) break;
      parent.folders.add(folder);
    }
  }
  return folders;
}

export function joinRel(parentRel: string, name: string): string {
  return parentRel === '' ? name : `${parentRel}/${name}`;
}
