// Git's precedence between nested ignore files. For a path, the deepest ignore file with a
// matching line decides, and within a file the last matching line wins; a folder that is
// ignored is never entered, so nothing below it can be re-included.
import ignore, { type Ignore } from 'ignore';

interface IgnoreLayer {
  /** Path from the rules' own folder to the folder being listed: `''` or `'a/b/'`. */
  readonly prefix: string;
  readonly rules: Ignore;
}

/** The ignore rules in force in one folder, deepest first. */
export interface IgnoreStack {
  readonly layers: readonly IgnoreLayer[];
  /** Rules in all layers, to bound the work per path. */
  readonly ruleCount: number;
}

export const EMPTY_IGNORE_STACK: IgnoreStack = { layers: [], ruleCount: 0 };

/** Compiles one folder's ignore files, in order: later lines win, so later files win. */
export function compileIgnoreRules(fileTexts: readonly string[]): Ignore {
  // Case-sensitive, as git is by default on Linux: the result must not depend on the host.
  const rules = ignore({ ignorecase: false });
  for (const text of fileTexts) rules.add(text);
  return rules;
}

/** Adds the listed folder's own rules (null when it has none) as the deepest layer. */
export function withFolderRules(stack: IgnoreStack, rules: Ignore | null, ruleCount: number): IgnoreStack {
  if (rules === null) return stack;
  return { layers: [{ prefix: '', rules }, ...stack.layers], ruleCount: stack.ruleCount + ruleCount };
}

/** Whether an entry of the listed folder is ignored. Symbolic links are not folders, as in git. */
export function isIgnored(stack: IgnoreStack, name: string, isFolder: boolean): boolean {
  const tail = isFolder ? `${name}/` : name;
  for (const { prefix, rules } of stack.layers) {
    const verdict = rules.test(prefix + tail);
    if (verdict.ignored) return true;
    if (verdict.unignored) return false;
  }
  return false;
}

function escapeGlob(path: string): string {
  return path.replace(/[\\*?[\]]/g, '\\$&');
}

/** The stack as seen from the sub-folder `name` of the listed folder. */
export function enterFolder(stack: IgnoreStack, name: string): IgnoreStack {
  const layers = stack.layers.map(({ prefix, rules }) => {
    const folderPath = `${prefix}${name}/`;
    if (!rules.test(folderPath).ignored) return { prefix: folderPath, rules };
    // These rules ignore the folder, yet it is entered: a deeper ignore file re-included it, or
    // it is the requested subdir. `ignore` would still report everything below it as ignored
    // by these rules (it checks parents), whereas git matches each path below on its own. A
    // copy of the rules that re-includes exactly this folder restores git's behaviour; the
    // added line matches no other path, so the verdict on every path below is unchanged.
    const copy = ignore({ ignorecase: false })
      .add(rules)
      .add({ pattern: `!/${escapeGlob(folderPath)}` });
    return { prefix: folderPath, rules: copy };
  });
  return { layers, ruleCount: stack.ruleCount };
}
