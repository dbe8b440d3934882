// Settings and services shared by every folder listing of one walk.
import type { SkipReason } from '../types.js';
import type { DirExcluder } from './dir-excludes.js';
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
}

export function joinRel(parentRel: string, name: string): string {
  return parentRel === '' ? name : `${parentRel}/${name}`;
}
