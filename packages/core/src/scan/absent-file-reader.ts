import type { ReadOutcome } from '../io/read-file-bytes.js';

/**
 * Reads files of the tree that are not on disk (WalkInput.absent) from where the source keeps
 * their bytes: a clone's object store, which spares writing every file out and reading it back.
 * A file it has is read, classified and counted as one read from disk would be.
 */
export interface AbsentFileReader {
  /** Whether it holds the file at this root-relative path. */
  has(path: string): boolean;
  /**
   * Each file's bytes, in order, as readFiles answers: into its `into` (shared memory, sized from
   * the walk) when there is room, else into shared memory of its own; `too_large` over `maxBytes`.
   */
  read(files: readonly { path: string; into?: Uint8Array }[], maxBytes: number): Promise<ReadOutcome[]>;
}
