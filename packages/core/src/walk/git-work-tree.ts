// What git knows about a work tree that its files do not show. Git applies its ignore rules to
// untracked files only: a tracked file is listed whatever `.gitignore` says, and a folder git
// ignores is still entered for the tracked files it holds.

/** Given by the source (which runs git); the walk itself never does. */
export interface GitWorkTree {
  /**
   * Root-relative POSIX paths of the files git tracks: a work tree's index, a clone's commit
   * tree. Names that are not UTF-8 are carried as path-bytes.ts says (decodePathBytes).
   */
  tracked: readonly string[];
  /** The bytes of `.git/info/exclude`: rules for the whole work tree, weaker than every `.gitignore`. */
  infoExclude: Uint8Array | null;
}

/** The tracked paths, and every folder that holds one, for lookups during the walk. */
export interface TrackedPaths {
  readonly files: ReadonlySet<string>;
  readonly folders: ReadonlySet<string>;
}

export function indexTracked(tracked: readonly string[]): TrackedPaths {
  const files = new Set(tracked);
  const folders = new Set<string>();
  for (const path of tracked) {
    for (let slash = path.lastIndexOf('/'); slash > 0; slash = path.lastIndexOf('/', slash - 1)) {
      const folder = path.slice(0, slash);
      if (folders.has(folder)) break;
      folders.add(folder);
    }
  }
  return { files, folders };
}
