// Why an entry of a listed folder is left out, if it is. The checks run in a fixed order so
// each skipped path gets one reason: the user's own filters (ignore files, patterns) come
// before what the entry is, so a link the user excluded reads `ignored`, not `symlink`.
import type { SkipReason } from '../types.js';
import { isIgnored, type IgnoreStack } from './ignore-stack.js';
import type { WalkContext } from './walk-context.js';

export function folderSkipReason(
  ctx: WalkContext,
  ignores: IgnoreStack,
  name: string,
  relPath: string,
  depth: number,
): SkipReason | null {
  if (ctx.isExcludedDir(relPath, name)) return 'excluded_dir';
  if (isIgnored(ignores, name, true)) return 'ignored';
  if (ctx.patterns.excludesFolder(relPath)) return 'pattern';
  const known = ctx.sourceSkips?.get(relPath);
  if (known !== undefined) return known;
  if (depth > ctx.maxDepth) return 'limit';
  return null;
}

/** For anything that is not a folder: files, symbolic links and special files. */
export function fileSkipReason(
  ctx: WalkContext,
  ignores: IgnoreStack,
  entry: { name: string; isFile(): boolean; isSymbolicLink(): boolean },
  relPath: string,
): SkipReason | null {
  if (isIgnored(ignores, entry.name, false)) return 'ignored';
  if (!ctx.patterns.keepsFile(relPath)) return 'pattern';
  if (ctx.acceptFile !== undefined && !ctx.acceptFile(relPath)) return 'pattern';
  const known = ctx.sourceSkips?.get(relPath);
  if (known !== undefined) return known;
  if (entry.isSymbolicLink()) return 'symlink';
  // FIFOs, sockets and devices: reading them could block or never end.
  if (!entry.isFile()) return 'unreadable';
  return null;
}
