// Reading a folder's `.gitignore` and `.gittxtignore` into one rule set.
import type { Ignore } from 'ignore';
import type { SkippedPath } from '../types.js';
import { compileIgnoreRules } from './ignore-stack.js';
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
  rules: Ignore | null;
  ruleCount: number;
  /** Ignore files that could not be applied (`unreadable`, `too_large`); not to be listed again. */
  problems: SkippedPath[];
}

const decoder = new TextDecoder('utf-8'); // strips a UTF-8 BOM, as git does

function countRules(text: string): number {
  let count = 0;
  for (const line of text.split('\n')) {
    const trimmed = line.trim();
    if (trimmed !== '' && !trimmed.startsWith('#')) count += 1;
  }
  return count;
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
  const texts: string[] = [];
  let ruleCount = 0;
  const problems: SkippedPath[] = [];
  for (const name of IGNORE_FILE_NAMES) {
    if (!present.includes(name)) continue;
    const path = joinRel(folderRel, name);
    // A link the source wrote as a plain file (its text is the target) is no ignore file.
    if (ctx.sourceSkips?.has(path)) continue;
    let text: string;
    try {
      const bytes = await ctx.pool.run(() => ctx.fs.readFile(folder, name, ctx.maxIgnoreFileBytes + 1));
      if (bytes.length > ctx.maxIgnoreFileBytes) {
        problems.push({ path, reason: 'too_large' });
        continue;
      }
      text = decoder.decode(bytes);
    } catch {
      problems.push({ path, reason: 'unreadable' });
      continue;
    }
    const count = countRules(text);
    if (rulesInForce + ruleCount + count > MAX_IGNORE_RULES_IN_FORCE) {
      problems.push({ path, reason: 'too_large' });
      continue;
    }
    texts.push(text);
    ruleCount += count;
  }
  return { rules: texts.length > 0 ? compileIgnoreRules(texts) : null, ruleCount, problems };
}
