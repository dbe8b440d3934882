// The engine's vocabulary. Everything here is plain data so it can cross worker-thread and
// process boundaries and be serialised into summary.json unchanged.

export const TEXT_SUBCATEGORIES = ['code', 'docs', 'config', 'data', 'other'] as const;
export const ASSET_SUBCATEGORIES = ['image', 'audio', 'video', 'pdf', 'binary'] as const;
export type TextSubcategory = (typeof TEXT_SUBCATEGORIES)[number];
export type AssetSubcategory = (typeof ASSET_SUBCATEGORIES)[number];
export type Subcategory = TextSubcategory | AssetSubcategory;

export const SKIP_REASONS = [
  'excluded_dir',
  'ignored',
  'pattern',
  'too_large',
  'symlink',
  'unreadable',
  'limit',
  'submodule',
] as const;
export type SkipReason = (typeof SKIP_REASONS)[number];

export interface SkippedPath {
  /** POSIX path relative to the repository root; a pruned directory is listed once, with a trailing `/`. */
  path: string;
  reason: SkipReason;
}

export type TokenEncodingName = 'o200k_base' | 'cl100k_base';

/** The user-facing scan options, as applied (defaults filled in). */
export interface ScanOptions {
  /** Extra directory names (any depth) or root-relative folder paths to prune. */
  excludeDirs: string[];
  /** gitignore-style globs; when non-empty, only matching files are kept. */
  includePatterns: string[];
  /** gitignore-style globs; matching files and folders are dropped. Exclude wins over include. */
  excludePatterns: string[];
  lite: boolean;
  createZip: boolean;
  /** Levels of the directory tree to draw; `null` draws everything. */
  treeDepth: number | null;
  docsOnly: boolean;
  /** Apply `.gitignore` / `.gittxtignore` files found in the tree. */
  syncIgnore: boolean;
  skipTree: boolean;
  /** Per-file byte cap chosen by the user; the engine's own `maxFileBytes` applies in any case. */
  sizeLimit: number | null;
}

export const DEFAULT_SCAN_OPTIONS: ScanOptions = {
  excludeDirs: [],
  includePatterns: [],
  excludePatterns: [],
  lite: false,
  createZip: false,
  treeDepth: null,
  docsOnly: false,
  syncIgnore: true,
  skipTree: false,
  sizeLimit: null,
};

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
}

export const DEFAULT_ENGINE_LIMITS: EngineLimits = {
  maxFiles: 50_000,
  maxDepth: 50,
  maxFileBytes: 10 * 1024 * 1024,
  walkTimeoutMs: 120_000,
};

/** A file the walk kept: not yet read. */
export interface WalkedFile {
  /** POSIX path relative to the repository root (includes the subdir prefix for subdir scans). */
  path: string;
  /** Absolute path on this host. */
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

/** One textual file after reading, as the renderers see it. */
export interface TextFileRecord {
  path: string;
  subcategory: TextSubcategory;
  size_bytes: number;
  /** Exact BPE count in a full scan; the fast estimate in inspect. */
  tokens_estimate: number;
  url: string;
  /** Source encoding when it was not UTF-8 (e.g. `UTF-16LE`, `windows-1252`). */
  encoding?: string;
}

export interface AssetRecord {
  path: string;
  subcategory: AssetSubcategory;
  size_bytes: number;
  url: string;
}

export interface SummaryTotals {
  total_files: number;
  total_size: number;
  estimated_tokens: number;
  file_type_breakdown: Partial<Record<Subcategory, number>>;
  tokens_by_type: Partial<Record<TextSubcategory, number>>;
  formatted: {
    total_size: string;
    estimated_tokens: string;
  };
}

export type ProgressPhase = 'walk' | 'read' | 'render' | 'zip' | 'done';

export interface ScanProgress {
  phase: ProgressPhase;
  files_done: number;
  files_total: number;
}

export type ProgressCallback = (progress: ScanProgress) => void;
