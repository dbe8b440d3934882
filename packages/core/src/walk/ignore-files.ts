// Reading a folder's `.gitignore` and `.gittxtignore` into one rule set.
import type { SkippedPath } from '../types.js';
import { indexIgnoreRules, rulesOfFile, type IgnoreRule, type IgnoreRules } from './ignore-rules.js';
import type { WalkContext } from './walk-context.js';
import { joinRel } from './walk-context.js';
import type { WalkFolder } from './walk-deps.js';

/** In the order they are applied: `.gittxtignore` lines come last, so they win. */
export const IGNORE_FILE_NAMES: readonly string[] = ['.gitignore', '.gittxtignore'];

/** reposcan's own ignore file: unlike git's, it filters tracked files too. */
const OWN_IGNORE_FILE = '.gittxtignore';

export interface FolderRules {
  /** Both files' rules, `.gittxtignore` last; null when the folder has no applicable ignore file. */
  rules: IgnoreRules | null;
  /** `.gittxtignore`'s rules alone (what a tracked file is matched against); null when it has none. */
  ownRules: IgnoreRules | null;
  /** Ignore files that could not be applied (`unreadable`, `too_large`); not to be listed again. */
  problems: SkippedPath[];
}

/**
 * Reads the ignore files `present` (names of regular files in the open folder, in any order). A file
 * that cannot be read or exceeds the per-file limit is recorded and left out: the walk goes on
 * with the other rules. There is no limit on the number of rules: matching cost grows with it,
 * and the walk's timeout bounds it (bench/README.md has the measurements).
 */
export async function loadFolderRules(
  ctx: Pick<WalkContext, 'fs' | 'pool' | 'maxIgnoreFileBytes' | 'sourceSkips'>,
  folder: WalkFolder,
  folderRel: string,
  present: readonly string[],
): Promise<FolderRules> {
  const rules: IgnoreRule[] = [];
  let own: IgnoreRule[] = [];
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
    const fileRules = rulesOfFile(bytes);
    if (name === OWN_IGNORE_FILE) own = fileRules;
    for (const rule of fileRules) rules.push(rule);
  }
  return {
    rules: rules.length > 0 ? indexIgnoreRules(rules) : null,
    ownRules: own.length > 0 ? indexIgnoreRules(own) : null,
    problems,
  };
}
