// Folder pruning by name or by repository-root-relative path: the defaults plus `exclude_dirs`.
import { DEFAULT_EXCLUDED_DIRS } from './default-excludes.js';

/** Tells whether a folder (root-relative path, and its name) is pruned. */
export type DirExcluder = (relPath: string, name: string) => boolean;

/**
 * `exclude_dirs` entries without an inner `/` are names matched at any depth; entries with one,
 * or written from the root (`/a` or `./a`), are root-relative folder paths. Empty and `.`
 * segments are tolerated (`./a//b/` is `a/b`).
 */
export function compileDirExcludes(excludeDirs: readonly string[]): DirExcluder {
  const names = new Set(DEFAULT_EXCLUDED_DIRS);
  const paths = new Set<string>();
  for (const entry of excludeDirs) {
    const segments = entry.split('/').filter((segment) => segment !== '' && segment !== '.');
    if (segments.length === 0) continue;
    const fromRoot = entry.startsWith('/') || entry.startsWith('./');
    if (segments.length > 1 || fromRoot) paths.add(segments.join('/'));
    else names.add(segments[0] as string);
  }
  return (relPath, name) => names.has(name) || paths.has(relPath);
}
