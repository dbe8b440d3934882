// Why an entry of a listed folder is left out, if it is. The checks run in a fixed order so
// each skipped path gets one reason: the user's own filters (ignore files, patterns) come
// before what the entry is, so a link the user excluded reads `ignored`, not `symlink`.
import type { SkipReason } from '../types.js';
import { isIgnored, type IgnoreStack } from './ignore-stack.js';
import type { WalkContext } from './walk-context.js';

/**
 * Git ignores untracked paths only: a tracked one is matched against `.gittxtignore` alone, and
 * a folder git ignores is entered for the tracked files it holds (`gitIgnored`: every untracked
 * path below it is ignored). Without tracked paths (not a git work tree) every path is matched
 * against all the rules.
 */
function ignoreVerdict(
  ctx: WalkContext,
  ignores: IgnoreStack,
  name: string,
  relPath: string,
  isFolder: boolean,
  gitIgnoredAbove: boolean,
): 'ignored' | 'kept' | 'tracked_only' {
  const { tracked } = ctx;
  const isTracked = tracked !== null && (isFolder ? tracked.folders.has(relPath) : tracked.files.has(relPath));
  if (!isTracked) return gitIgnoredAbove || isIgnored(ignores, name, isFolder) ? 'ignored' : 'kept';
  if (isIgnored(ignores, name, isFolder, true)) return 'ignored';
  if (!isFolder) return 'kept';
  return gitIgnoredAbove || isIgnored(ignores, name, true) ? 'tracked_only' : 'kept';
}

/** The folder's skip reason, or how to enter it. */
export function folderSkipReason(
  ctx: WalkContext,
  ignores: IgnoreStack,
  name: string,
  relPath: string,
  depth: number,
  gitIgnoredAbove: boolean,
): SkipReason | { gitIgnored: boolean } {
  if (ctx.isExcludedDir(relPath, name)) return 'excluded_dir';
  const verdict = ignoreVerdict(ctx, ignores, name, relPath, true, gitIgnoredAbove);
  if (verdict === 'ignored') return 'ignored';
  if (ctx.patterns.excludesFolder(relPath)) return 'pattern';
  const known = ctx.sourceSkips?.get(relPath);
  if (known !== undefined) return known;
  if (depth > ctx.maxDepth) return 'limit';
  return { gitIgnored: verdict === 'tracked_only' };
}

/** For anything that is not a folder: files, symbolic links and special files. */
export function fileSkipReason(
  ctx: WalkContext,
  ignores: IgnoreStack,
  entry: { name: string; isFile(): boolean; isSymbolicLink(): boolean },
  relPath: string,
  gitIgnoredAbove: boolean,
): SkipReason | null {
  if (ignoreVerdict(ctx, ignores, entry.name, relPath, false, gitIgnoredAbove) === 'ignored') return 'ignored';
  if (!ctx.patterns.keepsFile(relPath)) return 'pattern';
  if (ctx.acceptFile !== undefined && !ctx.acceptFile(relPath)) return 'pattern';
  const known = ctx.sourceSkips?.get(relPath);
  if (known !== undefined) return known;
  if (entry.isSymbolicLink()) return 'symlink';
  // FIFOs, sockets and devices: reading them could block or never end.
  if (!entry.isFile()) return 'unreadable';
  return null;
}
