// The engine's vocabulary. Everything here is plain data so it can cross worker-thread and
// process boundaries and be serialised into summary.json unchanged.

import { DEFAULT_ENGINE_SCAN_OPTIONS } from '@reposcan/contracts/vocabulary';
import type {
  AssetSubcategory,
  EngineScanOptions,
  SkipReason,
  Subcategory,
  TextSubcategory,
} from '@reposcan/contracts/vocabulary';
import type { NotCompressedReason } from './compress/code-transform.js';

// The shared words (subcategories, skip reasons, encodings, the scan options) are defined once
// in the contracts' vocabulary; the engine speaks them under its own names.
export { ASSET_SUBCATEGORIES, SKIP_REASONS, TEXT_SUBCATEGORIES } from '@reposcan/contracts/vocabulary';
export type {
  AssetSubcategory,
  SkipReason,
  Subcategory,
  TextSubcategory,
  TokenEncodingName,
} from '@reposcan/contracts/vocabulary';

export interface SkippedPath {
  /**
   * POSIX path relative to the repository root, as shownPath (path-bytes.ts) shows it; a pruned
   * directory is listed once, with a trailing `/`.
   */
  path: string;
  reason: SkipReason;
}

/** The user-facing scan options, as applied (defaults filled in); each is described in the option table. */
export type ScanOptions = EngineScanOptions;

export const DEFAULT_SCAN_OPTIONS: ScanOptions = DEFAULT_ENGINE_SCAN_OPTIONS;

/** Server-side limits; configurable by the operator, never by the request. */
export interface EngineLimits {
  /** Files kept by the walk; the rest are skipped with reason `limit`. */
  maxFiles: number;
  /** Folder depth below the scan root; deeper folders are skipped with reason `limit`. */
  maxDepth: number;
  /** Files larger than this are skipped with reason `too_large`, never read. */
  maxFileBytes: number;
  /** Wall-clock budget of the walk: past it the walk stops with a WalkTimeoutError (its thread is ended). */
  walkTimeoutMs: number;
  /** Compressed code keeps a file over this many bytes as it is (default COMPRESS_MAX_BYTES). */
  compressMaxBytes?: number;
  /** Compressed code keeps a file whose parse runs longer as it is (default COMPRESS_TIMEOUT_MS). */
  compressTimeoutMs?: number;
}

export const DEFAULT_ENGINE_LIMITS: EngineLimits = {
  maxFiles: 50_000,
  maxDepth: 50,
  maxFileBytes: 10 * 1024 * 1024,
  walkTimeoutMs: 120_000,
};

/** A file the walk kept: not yet read. */
export interface WalkedFile {
  /**
   * POSIX path relative to the repository root (includes the subdir prefix for subdir scans),
   * as shownPath (path-bytes.ts) shows it once the walk hands it on.
   */
  path: string;
  /** Absolute path on this host, carried as path-bytes.ts says (fsPath gives what fs takes). */
  absPath: string;
  /** Size from lstat at walk time. */
  size: number;
}

export interface WalkResult {
  /** Kept files in output order: depth-first, folders before files, names compared case-insensitively. */
  files: WalkedFile[];
  skipped: SkippedPath[];
}

/** Where the scanned tree came from: drives file URLs and the repository block of outputs. */
export type HostFamily = 'github' | 'gitlab' | 'bitbucket' | 'gitea';

export interface SourceInfo {
  type: 'remote' | 'local' | 'upload';
  /** The repository's web URL without a trailing slash (`https://github.com/o/r`), or null. */
  url: string | null;
  /** Which URL grammar the host uses for file links; null for local paths and uploads. */
  hostFamily: HostFamily | null;
  /** Ref that file links point at (commit SHA preferred, else branch). */
  ref: string | null;
  branch: string | null;
  commit: string | null;
  /** Subfolder of the repository that was scanned, POSIX, no leading or trailing slash; null for all. */
  subdir: string | null;
}

/** One changed path between two commits, as git's diff with rename detection reports it (sources computes it). */
export interface FileChange {
  status: 'added' | 'modified' | 'renamed' | 'deleted';
  /** The path in the scanned commit; a deleted file's path in the base commit (POSIX, from the repository root). */
  path: string;
  /** A renamed file's path in the base commit; null otherwise. */
  oldPath: string | null;
  /** A renamed file's similarity index (0-100); null otherwise. */
  similarity: number | null;
  /** git found either side binary: no diff. */
  binary: boolean;
  /** Where in the change set's `diffFile` git's unified diff of the file is, from its `diff --git` line; empty for a binary file. */
  diff: { at: number; length: number };
}

/** What a change digest is built from: the base and every path that changed since, in git's order. */
export interface ChangeSet {
  baseRef: string;
  baseCommit: string;
  /** git's diff output, which the changes point into; read a patch at a time, as it can be as large as the repository. */
  diffFile: string;
  changes: FileChange[];
}

/** One textual file after reading, as the renderers see it. */
export interface TextFileRecord {
  path: string;
  subcategory: TextSubcategory;
  size_bytes: number;
  /** Exact BPE count: set by a full scan, which counts exactly; inspect, which estimates, leaves it out. */
  tokens?: number;
  /** The count under the name the API first gave it: exact in a full scan (equal to `tokens`), the fast estimate in inspect. */
  tokens_estimate: number;
  url: string;
  /** Source encoding when it was not UTF-8 (e.g. `UTF-16LE`, `windows-1252`, `UTF-8` with broken bytes). */
  encoding?: string;
  /** Characters that could not be decoded and became U+FFFD; absent when there were none. */
  replacements?: number;
  /** Secrets replaced by their mark in the text the outputs hold (`secrets: redact`); absent when none. */
  redactions?: number;
  /**
   * With `compress` or `remove_comments`, for a file in a language they apply to: whether it was
   * transformed (else why not) and its count before; `tokens` is of the text the outputs hold.
   */
  compression?: { result: 'compressed' | NotCompressedReason; tokens_before: number };
}

export interface AssetRecord {
  path: string;
  subcategory: AssetSubcategory;
  size_bytes: number;
  url: string;
}

/** A textual file of a full scan: its count is exact. */
export type ScannedFileRecord = TextFileRecord & { tokens: number };

export interface SummaryTotals {
  total_files: number;
  total_size: number;
  /** Exact total, as TextFileRecord.tokens: full scans only. */
  tokens?: number;
  /** The total under the name the API first gave it: exact in a full scan (equal to `tokens`), an estimate in inspect. */
  estimated_tokens: number;
  file_type_breakdown: Partial<Record<Subcategory, number>>;
  tokens_by_type: Partial<Record<TextSubcategory, number>>;
  /** Textual files with at least one replaced character (`replacements` on their records). */
  files_with_replacements: number;
  formatted: {
    total_size: string;
    tokens?: string;
    estimated_tokens: string;
  };
}

/** The totals of a full scan: exact, under both names. */
export type ScanSummaryTotals = SummaryTotals & { tokens: number; formatted: { tokens: string } };

/** The engine's phases, in order. `done` is not one: a scan is done once its caller has published the artifacts. */
export type ProgressPhase = 'walk' | 'read' | 'render' | 'zip';

export interface ScanProgress {
  phase: ProgressPhase;
  files_done: number;
  files_total: number;
}

export type ProgressCallback = (progress: ScanProgress) => void;
