// The file-system surface the walk needs, injected so tests can simulate failures
// (unreadable folders, vanished files) that a real tree cannot produce on demand.

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

export interface WalkDeps {
  /** Entries of a folder with their types, as `readdir(path, { withFileTypes: true })` gives them. */
  readdir: (absPath: string) => Promise<readonly WalkDirent[]>;
  /** Stats of the entry itself, never of a link's target. */
  lstat: (absPath: string) => Promise<WalkStats>;
  /** At most `maxBytes` bytes of a regular file, refusing to follow a symbolic link. */
  readFile: (absPath: string, maxBytes: number) => Promise<Uint8Array>;
  /**
   * The calls block their thread and finish before they return: nothing overlaps them, so the walk
   * lists a folder only when the output reaches it instead of listing ahead.
   */
  blocking?: boolean;
}
