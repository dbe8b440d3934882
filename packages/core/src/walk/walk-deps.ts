// The file-system surface the walk needs, injected so tests can simulate failures
// (unreadable folders, vanished files) that a real tree cannot produce on demand.
//
// Every call reaches into a folder the walk has opened and proven to be where it expects it, so
// nothing it lists, measures or reads can come from outside the scanned tree, even while folders
// on the way are renamed or swapped for links (README: "What is scanned").

export interface WalkDirent {
  readonly name: string;
  isFile(): boolean;
  isDirectory(): boolean;
  isSymbolicLink(): boolean;
}

export interface WalkStats {
  readonly size: number;
  isFile(): boolean;
  isDirectory(): boolean;
  isSymbolicLink(): boolean;
}

/** A folder of the tree, open, and proven to be at `abs` when it was opened. */
export interface WalkFolder {
  /** The folder's real path: the scan root's real path joined with the folder's relative path. */
  readonly abs: string;
  /**
   * A path to this very folder, whatever has been renamed or swapped for a link since it was
   * opened (`/proc/self/fd/<fd>`); its entries are `${via}/${name}`. Where the platform has no
   * such path, `abs` itself.
   */
  readonly via: string;
}

export interface WalkDeps {
  /**
   * Opens the folder at `abs` (absolute and real), refusing a link (error code ELOOP), anything
   * but a folder (ENOTDIR), and a folder whose real path, once open, is not `abs` (EMOVED: a
   * folder on the way was swapped for a link or moved).
   */
  openFolder: (abs: string) => Promise<WalkFolder>;
  /** Closes a folder openFolder gave; every call into it has settled. */
  closeFolder: (folder: WalkFolder) => Promise<void>;
  /** Entries of the open folder with their types, as `readdir(path, { withFileTypes: true })` gives them. */
  readdir: (folder: WalkFolder) => Promise<readonly WalkDirent[]>;
  /** Stats of the entry `name` of the open folder itself, never of a link's target. */
  lstat: (folder: WalkFolder, name: string) => Promise<WalkStats>;
  /** At most `maxBytes` bytes of the regular file `name` of the open folder, refusing to follow a link. */
  readFile: (folder: WalkFolder, name: string, maxBytes: number) => Promise<Uint8Array>;
  /**
   * The calls block their thread and finish before they return: nothing overlaps them, so the walk
   * lists a folder only when the output reaches it instead of listing ahead.
   */
  blocking?: boolean;
}
