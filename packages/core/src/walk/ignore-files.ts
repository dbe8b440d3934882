// Reading a folder's `.gitignore` and `.gittxtignore` into one rule set.
import type { SkippedPath } from '../types.js';
import { indexIgnoreRules, rulesOfFile, type IgnoreRule, type IgnoreRules } from './ignore-rules.js';
import type { WalkContext } from './walk-context.js';
import { joinRel } from './walk-context.js';
import type { WalkFolder } from './walk-deps.js';

/** In the order they are applied: `.gittxtignore` lines come last, so they win. */
export const IGNORE_FILE_NAMES: readonly string[] = ['.gitignore', '.gittxtignore'];

/**
 * Rules in force in one folder (its own and those of the folders above). Every path is matched
 * against every rule in force, so a repository with a huge generated ignore file could stall
 * the walk for minutes; real ignore files hold tens to a few hundred rules.
 */
export const MAX_IGNORE_RULES_IN_FORCE = 5_000;

export interface FolderRules {
  /** null when the folder has no applicable ignore file. */
  rules: IgnoreRules | null;
  ruleCount: number;
  /** Ignore files that could not be applied (`unreadable`, `too_large`); not to be listed again. */
  problems: SkippedPath[];
}

/**
 * Reads the ignore files `present` (names of regular files in the open folder, in any order). A file
 * that cannot be read, exceeds the per-file limit or would take the rules in force past
 * MAX_IGNORE_RULES_IN_FORCE is recorded and left out: the walk goes on with the other rules.
 */
export async function loadFolderRules(
  ctx: Pick<WalkContext, 'fs' | 'pool' | 'maxIgnoreFileBytes' | 'sourceSkips'>,
  folder: WalkFolder,
  folderRel: string,
  present: readonly string[],
  rulesInForce: number,
): Promise<FolderRules> {
  const rules: IgnoreRule[] = [];
  let ruleCount = 0;
  const problems: SkippedPath[] = [];
  for (const name of IGNORE_FILE_NAMES) {
    if (!present.includes(name)) continue;
    const path = joinRel(folderRel, name);
    // A link the source wrote as a plain file (its text is the target) is no ignore file.
    if (ctx.sourceSkips?.has(path)) continue;
    let bytes: Uint8Array;
    try {
      bytes = await ctx.pool.run(() => ctx.fs.readFile(folder, name, ctx.maxIgnoreFileBytes + 1));
    } catch {
      problems.push({ path, reason: 'unreadable' });
      continue;
    }
    if (bytes.length > ctx.maxIgnoreFileBytes) {
      problems.push({ path, reason: 'too_large' });
      continue;
    }
    const own = rulesOfFile(bytes);
    if (rulesInForce + ruleCount + own.length > MAX_IGNORE_RULES_IN_FORCE) {
      problems.push({ path, reason: 'too_large' });
      continue;
    }
    for (const rule of own) rules.push(rule);
    ruleCount += own.length;
  }
  return { rules: rules.length > 0 ? indexIgnoreRules(rules) : null, ruleCount, problems };
}
