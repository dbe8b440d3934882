// `include_patterns` / `exclude_patterns`: gitignore-style globs over root-relative POSIX paths,
// compiled once per walk by `ignore` (gitignore syntax only: no braces or extglobs, so a pattern
// such as `+(+(a))` is matched literally and cannot blow up the regular expression engine).
import ignore, { type Ignore } from 'ignore';

export interface PathPatterns {
  /** True when exclude patterns drop the folder (root-relative path) and all it holds. */
  excludesFolder: (relPath: string) => boolean;
  /** True when the file (root-relative path) passes both lists; exclude wins over include. */
  keepsFile: (relPath: string) => boolean;
}

function compile(patterns: readonly string[]): Ignore | null {
  if (patterns.length === 0) return null;
  // One rule per entry: an entry holding a newline stays one (odd) rule rather than several.
  return ignore({ ignorecase: false }).add(patterns.map((pattern) => ({ pattern })));
}

export function compilePathPatterns(
  includePatterns: readonly string[],
  excludePatterns: readonly string[],
): PathPatterns {
  const include = compile(includePatterns);
  const exclude = compile(excludePatterns);
  return {
    // Include patterns never prune: a folder that does not match may hold files that do.
    excludesFolder: (relPath) => exclude !== null && exclude.ignores(`${relPath}/`),
    keepsFile: (relPath) =>
      !(exclude !== null && exclude.ignores(relPath)) && (include === null || include.ignores(relPath)),
  };
}
