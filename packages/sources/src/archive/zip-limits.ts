/**
 * What an uploaded archive may declare and expand to; every limit is checked before writing.
 * There is no per-file limit: a file over the server's per-file size is extracted like any
 * other, so the engine skips it as `too_large` and the summary lists it, exactly as for a
 * clone; `maxUncompressedBytes` bounds the disk it takes.
 */
export interface ZipLimits {
  /** Entries in the central directory, metadata entries included. */
  maxEntries: number;
  /** Σ declared uncompressed sizes, and Σ bytes actually inflated. */
  maxUncompressedBytes: number;
  /** Σ declared uncompressed sizes / archive file size. */
  maxRatio: number;
  /** Path components of an entry name (`a/b/c.txt` has 3). */
  maxDepth: number;
  /** UTF-8 bytes of a whole entry name (1024). */
  maxNameBytes: number;
  /** UTF-8 bytes of one path component (255, the usual file-system limit). */
  maxComponentBytes: number;
}
