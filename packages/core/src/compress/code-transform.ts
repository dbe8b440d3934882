// Compressed code's shared words: which files it applies to, what a file thread is asked and what it
// answers (compress-code.ts does the work there), and the caps. Plain data, so it crosses threads as
// is, and importing it loads no parser: a scan without `compress` or `remove_comments` never loads
// web-tree-sitter.

/** The languages compressed code knows, each one grammar of @repomix/tree-sitter-wasms. */
export const CODE_LANGUAGES = [
  'typescript',
  'tsx',
  'javascript',
  'python',
  'go',
  'rust',
  'java',
  'c',
  'cpp',
  'c_sharp',
  'ruby',
  'php',
] as const;
export type CodeLanguage = (typeof CODE_LANGUAGES)[number];

const BY_EXTENSION: Readonly<Record<string, CodeLanguage>> = {
  ts: 'typescript',
  mts: 'typescript',
  cts: 'typescript',
  tsx: 'tsx',
  js: 'javascript',
  mjs: 'javascript',
  cjs: 'javascript',
  jsx: 'javascript',
  py: 'python',
  pyi: 'python',
  go: 'go',
  rs: 'rust',
  java: 'java',
  c: 'c',
  // A header is tried as C, then as C++ (compress-code.ts).
  h: 'c',
  cc: 'cpp',
  cpp: 'cpp',
  cxx: 'cpp',
  'c++': 'cpp',
  hh: 'cpp',
  hpp: 'cpp',
  hxx: 'cpp',
  'h++': 'cpp',
  ipp: 'cpp',
  cs: 'c_sharp',
  rb: 'ruby',
  rake: 'ruby',
  gemspec: 'ruby',
  php: 'php',
};

/** The language of a file by its name's extension (case-insensitive), or null when it is none of them. */
export function codeLanguageOf(path: string): CodeLanguage | null {
  const name = path.slice(path.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  if (dot <= 0) return null;
  return BY_EXTENSION[name.slice(dot + 1).toLowerCase()] ?? null;
}

/** Files over this many bytes are kept as they are: a parse tree costs tens of bytes per byte of source. */
export const COMPRESS_MAX_BYTES = 1 << 20;
/**
 * A parse that runs longer is cancelled and the file kept as it is, so one file cannot hold a file
 * thread. A backstop, generous because the threads run at nice 19: on a busy machine a 1 MiB
 * bundle's parse (0.1-0.2 s idle) took over 2 s. The deterministic cap is PARSE_STEPS_PER_KIB.
 */
export const COMPRESS_TIMEOUT_MS = 10_000;
/**
 * A parse that calls its progress callback more often than this per KiB of text (plus 2 000) is
 * cancelled too: the same text is always cut the same way, whatever the load. Real code took at
 * most 23 calls a KiB (minified bundles), 7.5 at the median (the bench corpus).
 */
export const PARSE_STEPS_PER_KIB = 64;
/** What stands where a body was. */
export const ELISION = '⋯';

/** What a file thread is asked to do to each text of a batch. */
export interface CodeTransform {
  /** Replace function and method bodies with ELISION. */
  signatures: boolean;
  /** Remove comments (doc comments stay when `signatures` is on too). */
  removeComments: boolean;
  /** Caps per file; the defaults above unless a test sets them. */
  maxBytes: number;
  timeoutMs: number;
  /** Default PARSE_STEPS_PER_KIB. */
  parseStepsPerKib?: number;
}

/** Why a file was kept as it is. */
export type NotCompressedReason = 'too_large' | 'timeout' | 'parse_error';

/** What became of one text: its new bytes (only when they differ), or why it was kept as it is. */
export type TransformOutcome = { result: 'transformed'; content?: Uint8Array } | { result: NotCompressedReason };

/** The report of a scan or preview with `compress` or `remove_comments` (absent with neither). */
export interface CompressionSummary {
  compress: 'none' | 'signatures';
  remove_comments: boolean;
  /** Files in a language compressed code knows, transformed. */
  files: number;
  /** Their tokens before and after (exact in a scan, estimates in a preview). */
  tokens_before: number;
  tokens_after: number;
  /** Files in such a language kept as they are, and why. */
  not_compressed: Array<{ path: string; reason: NotCompressedReason }>;
}
