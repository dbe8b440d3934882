import type { FileCompression, FileSecrets } from './process-files.js';
import type { TextSubcategory } from '../types.js';

/**
 * What an earlier scan made of one textual file: everything a scan needs of it but its text,
 * which `FileReuse.load` gives. Plain data, so a caller can keep it anywhere.
 */
export interface StoredText {
  subcategory: TextSubcategory;
  /** The charset it was decoded from; null for UTF-8. */
  encoding: string | null;
  replacements: number;
  tokens: number;
  secrets: FileSecrets;
  compression: FileCompression;
}

/** What FileReuse.find answers: the stored outcome, and the length of its text. */
export interface FoundText extends StoredText {
  bytes: number;
}

/** A textual file a scan processed itself: what a FileReuse may keep for later scans. */
export interface FreshText extends StoredText {
  path: string;
  /** Its size on disk, as the walk saw it. */
  size: number;
  /** The text the outputs hold (decoded, redacted, transformed); valid only during `learn`. */
  content: Uint8Array;
}

/**
 * Files an earlier scan processed, by path: a file found here is neither read, classified,
 * checked nor counted; its stored outcome and text stand in for all of it. The caller decides
 * what makes a file the same (a remote clone: its git blob id and the options that shape texts);
 * the engine only asks by path and size. The walk reads ignore files (IGNORE_FILE_NAMES) itself,
 * before any file is processed: a caller must not stand in for those.
 */
export interface FileReuse {
  /** The stored outcome of the file at `path` of `size` bytes, or undefined to process it. */
  find(path: string, size: number): FoundText | undefined;
  /**
   * The stored texts of these paths (each one `find` answered), in order, read back to back into
   * `into` (their total length, in the memory the scan reads files into): each one a view of it.
   */
  load(paths: readonly string[], into: Uint8Array): Promise<Uint8Array[]>;
  /** Hears of every textual file processed afresh, in walk order; a scan awaits it. */
  learn?(file: FreshText): Promise<void> | void;
}
