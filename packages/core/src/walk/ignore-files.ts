// Reading a folder's `.gitignore` and `.gittxtignore` into one rule set.
import { ScanError } from '@reposcan/contracts/error-codes';
import type { SkippedPath } from '../types.js';
import { indexIgnoreRules, rulesOfFile, type IgnoreRule, type IgnoreRules } from './ignore-rules.js';
import type { WalkContext } from './walk-context.js';
import { joinRel } from './walk-context.js';
import type { WalkFolder } from './walk-deps.js';
import { IGNORE_FILE_NAMES } from './ignore-file-names.js';

/** reposcan's own ignore file: unlike git's, it filters tracked files too. */
const OWN_IGNORE_FILE = '.gittxtignore';

export interface FolderRules {
  /** Both files' rules, `.gittxtignore` last; null when the folder has no applicable ignore file. */
  rules: IgnoreRules | null;
  /** `.gittxtignore`'s rules alone (what a tracked file is matched against); null when it has none. */
  ownRules: IgnoreRules | null;
  /** Ignore files that could not be read (`unreadable`); not to be listed again. */
  problems: SkippedPath[];
}

/**
 * Reads the ignore files `present` (names of regular files in the open folder, in any order). A file
 * that cannot be read is recorded and left out, as git warns and goes on; one over the per-file
 * limit stops the walk (IGNORE_FILE_TOO_LARGE). There is no limit on the number of rules: most
 * lines are looked up, and the walk's timeout bounds the rest (bench/README.md has the numbers).
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
      // Git would apply it: scanning without its rules would scan a different set of files.
      throw new ScanError(
        'IGNORE_FILE_TOO_LARGE',
        `The ignore file ${path} is larger than the ${ctx.maxIgnoreFileBytes} bytes this server reads from one file (MAX_FILE_BYTES). Scan with sync_ignore set to false, or ask the operator to raise MAX_FILE_BYTES.`,
      );
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
