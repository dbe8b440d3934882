// `include_patterns` / `exclude_patterns`: gitignore lines over root-relative POSIX paths, as if
// each list were one `.gitignore` at the repository root. A path is matched when it or a folder
// above it is, as git treats everything inside an ignored folder. Gitignore syntax only: braces
// and extglobs such as `+(a)` are literal.
import { pathBytesOf } from '../path-bytes.js';
import {
  indexIgnoreRules,
  lastMatchingRule,
  ruleOfLine,
  writeUtf8,
  type IgnoreRule,
  type IgnoreRules,
} from './ignore-rules.js';

export interface PathPatterns {
  /** True when exclude patterns drop the folder (root-relative path) and all it holds. */
  excludesFolder: (relPath: string) => boolean;
  /** True when the file (root-relative path) passes both lists; exclude wins over include. */
  keepsFile: (relPath: string) => boolean;
}

/** Folder verdicts remembered per list: a folder's files are classified one after another. */
const MAX_CACHED_FOLDERS = 4096;

let pathBuffer: Uint8Array = new Uint8Array(4096);

type PathMatcher = (relPath: string, isFolder: boolean) => boolean;

function compile(patterns: readonly string[]): PathMatcher | null {
  if (patterns.length === 0) return null;
  // One rule per entry: an entry holding a newline stays one (odd) rule rather than several.
  const rules = patterns
    .map((pattern) => ruleOfLine(pathBytesOf(pattern)))
    .filter((rule): rule is IgnoreRule => rule !== null);
  const set: IgnoreRules = indexIgnoreRules(rules);

  const own = (relPath: string, isFolder: boolean): boolean => {
    const slash = relPath.lastIndexOf('/');
    const name = relPath.slice(slash + 1);
    let end = 0;
    let nameStart = 0;
    if (set.needsBytes) {
      if (pathBuffer.length < 3 * relPath.length) pathBuffer = new Uint8Array(3 * relPath.length);
      nameStart = writeUtf8(pathBuffer, 0, relPath.slice(0, slash + 1));
      end = writeUtf8(pathBuffer, nameStart, name);
    }
    const rule = lastMatchingRule(set, name, isFolder, pathBuffer, 0, nameStart, end);
    return rule !== null && !rule.negative;
  };

  const folders = new Map<string, boolean>();
  const folderMatched = (relPath: string): boolean => {
    const known = folders.get(relPath);
    if (known !== undefined) return known;
    const slash = relPath.lastIndexOf('/');
    const matched = (slash > 0 && folderMatched(relPath.slice(0, slash))) || own(relPath, true);
    if (folders.size >= MAX_CACHED_FOLDERS) folders.clear();
    folders.set(relPath, matched);
    return matched;
  };

  return (relPath, isFolder) => {
    const slash = relPath.lastIndexOf('/');
    return (slash > 0 && folderMatched(relPath.slice(0, slash))) || own(relPath, isFolder);
  };
}

export function compilePathPatterns(
  includePatterns: readonly string[],
  excludePatterns: readonly string[],
): PathPatterns {
  const include = compile(includePatterns);
  const exclude = compile(excludePatterns);
  return {
    // Include patterns never prune: a folder that does not match may hold files that do.
    excludesFolder: (relPath) => exclude !== null && exclude(relPath, true),
    keepsFile: (relPath) =>
      !(exclude !== null && exclude(relPath, false)) && (include === null || include(relPath, false)),
  };
}
