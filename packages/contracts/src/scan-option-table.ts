// The scan options, one row each: everything else is derived from these rows. The API's zod
// schemas and openapi.yaml (scan-options.ts), the engine's camelCase option type and defaults,
// the one wire <-> engine mapping, and the command line's flags, parsing and help.
//
// A row's key is the option's name on the wire (JSON bodies, upload query, summary.json); the
// engine's name is the same in camelCase. Row order is the key order of every JSON document
// that lists the options (summary.json in the bundle among them), so new rows go at the end.

/** What `secrets` can be: hide found secrets in the outputs, only list them, or look for none. */
export const SECRETS_MODES = ['redact', 'report', 'off'] as const;
export type SecretsMode = (typeof SECRETS_MODES)[number];

/** What `compress` can be: code as it is, or its signatures with bodies elided. */
export const COMPRESS_MODES = ['none', 'signatures'] as const;
export type CompressMode = (typeof COMPRESS_MODES)[number];

/** An on/off option; its command-line flag turns it from its default to the other value. */
interface SwitchOption {
  readonly kind: 'switch';
  readonly default: boolean;
}

/** A list of names or globs (default empty); the command line takes it repeated or comma-separated. */
interface ListOption {
  readonly kind: 'list';
  /** Shown in openapi.yaml. */
  readonly example: readonly string[];
}

/** One of a closed list of words. */
interface ChoiceOption {
  readonly kind: 'choice';
  readonly values: readonly [string, ...string[]];
  readonly default: string;
}

/** A whole number from `min` (to `max` when given), or null (the default) for "no limit". */
interface CountOption {
  readonly kind: 'count';
  readonly min: number;
  readonly max?: number;
}

/** A git ref name or commit id (a plain name, no option look-alikes), or null (the default) for none. */
interface RefOption {
  readonly kind: 'ref';
  /** Shown in openapi.yaml. */
  readonly example: string;
}

export type ScanOptionSpec = (SwitchOption | ListOption | ChoiceOption | CountOption | RefOption) & {
  /** For openapi.yaml: what the option does, to someone calling the API. */
  readonly description: string;
  /** Only shapes what a scan writes: a preview (POST /v1/inspect) neither takes nor needs it. */
  readonly output?: true;
};

export const SCAN_OPTIONS = {
  exclude_dirs: {
    kind: 'list',
    description:
      'Folder names (any depth) or repository-root-relative folder paths to skip, on top of the defaults (VCS, dependency, cache and editor folders).',
    example: ['dist', 'test/fixtures'],
  },
  include_patterns: {
    kind: 'list',
    description:
      'gitignore-style globs on root-relative POSIX paths; when given, only matching files are kept. A pattern without `/` matches a name at any depth; `**` spans folders.',
    example: ['*.ts', 'docs/**'],
  },
  exclude_patterns: {
    kind: 'list',
    description: 'gitignore-style globs; matching files and folders are dropped. Exclude wins over include.',
    example: ['*.test.ts'],
  },
  lite: {
    kind: 'switch',
    default: false,
    output: true,
    description:
      'Lite outputs: only the tree and file contents, without the summary, per-file metadata and asset list.',
  },
  create_zip: {
    kind: 'switch',
    default: false,
    output: true,
    description:
      "Also build the ZIP bundle: the outputs, manifest.json, summary.json and README.md at the top, the repository's non-textual files under repository/.",
  },
  tree_depth: {
    kind: 'count',
    min: 0,
    max: 100,
    description: 'Levels of the directory tree to draw; deeper levels collapse to `└── ...`. null draws all.',
  },
  docs_only: {
    kind: 'switch',
    default: false,
    description: 'Keep only files whose subcategory is `docs`.',
  },
  sync_ignore: {
    kind: 'switch',
    default: true,
    description: "Apply the repository's `.gitignore` files (every level) and `.gittxtignore`.",
  },
  skip_tree: {
    kind: 'switch',
    default: false,
    description: 'Leave the directory tree out of every output.',
  },
  size_limit: {
    kind: 'count',
    min: 1,
    description:
      'Skip files larger than this many bytes (reason `too_large`); the server per-file limit applies in any case.',
  },
  secrets: {
    kind: 'choice',
    values: SECRETS_MODES,
    default: 'redact',
    description:
      "Secret detection (secretlint's recommended rules): `redact` replaces each finding in the outputs with `[REDACTED:<rule>]` and lists it in `secrets`; `report` lists findings but leaves the outputs as they are; `off` looks for nothing. Files over 2 MiB are not checked (listed in `secrets.not_checked`).",
  },
  max_tokens_per_part: {
    kind: 'count',
    min: 1000,
    max: 10_000_000,
    output: true,
    description:
      "Cut the txt, md and json outputs into numbered parts of at most this many tokens each (the scan's encoding, every byte of the part counted exactly). Files stay whole unless one alone exceeds it (then cut at line boundaries, a longer line at a character boundary, each piece marked `part k of n of this file`). null writes one output per format.",
  },
  compress: {
    kind: 'choice',
    values: COMPRESS_MODES,
    default: 'none',
    description:
      'Compressed code for TypeScript, TSX, JavaScript, Python, Go, Rust, Java, C, C++, C#, Ruby and PHP files (parsed with tree-sitter): `signatures` keeps imports, type, interface and class declarations, function and method signatures and comments, and replaces each function or method body with `⋯`; `none` leaves code as it is. Other files are unchanged. A file over 1 MiB, one whose parse runs too long (a budget of parser steps per KiB, and 10 s), or one with a syntax error is kept as it is (listed in `compression.not_compressed`). Token counts are of the compressed text.',
  },
  remove_comments: {
    kind: 'switch',
    default: false,
    description:
      'Remove comments (and Python docstrings) from files in the languages `compress` knows. With `compress: signatures` the doc comments stay: comments in doc style (`/**`, `///`, `//!`) or directly above the code they describe, and docstrings. Same fallbacks as `compress`.',
  },
  base_ref: {
    kind: 'ref',
    output: true,
    example: 'v1.2.0',
    description:
      "A change digest instead of a full scan (remote git repositories only): a branch, tag or full commit id of the same repository. The outputs hold only the files that changed between it and the scanned ref (git's rename detection), each with its unified diff and its new text, and list renamed and deleted paths; binary files are listed without either. The other options filter the changed files as they filter a scan. Unknown ref: 422 `BASE_REF_NOT_FOUND`; a local path or an upload: 422 `BASE_REF_NOT_SUPPORTED`. Not with `max_tokens_per_part`.",
  },
} as const satisfies Record<string, ScanOptionSpec>;

export type ScanOptionName = keyof typeof SCAN_OPTIONS;
export const SCAN_OPTION_NAMES = Object.keys(SCAN_OPTIONS) as ScanOptionName[];

/**
 * How `reposcan` spells each option, in the order its help lists them (by topic, which is not
 * the wire order above). `arg` names the value a flag takes; a switch's flag takes none.
 */
export const SCAN_OPTION_FLAGS = {
  include_patterns: {
    flag: '--include',
    arg: '<glob>',
    help: 'keep only matching files (gitignore-style; repeat or comma-separate)',
  },
  exclude_patterns: { flag: '--exclude', arg: '<glob>', help: 'drop matching files and folders (wins over --include)' },
  exclude_dirs: {
    flag: '--exclude-dir',
    arg: '<dir>',
    help: 'skip folders by name or root-relative path (on top of the defaults)',
  },
  docs_only: { flag: '--docs-only', help: 'keep only documentation files' },
  sync_ignore: { flag: '--no-sync-ignore', help: "ignore the repository's .gitignore/.gittxtignore files" },
  tree_depth: { flag: '--tree-depth', arg: '<n>', help: 'draw n levels of the directory tree (0-100)' },
  skip_tree: { flag: '--skip-tree', help: 'leave the tree out' },
  size_limit: { flag: '--size-limit', arg: '<bytes>', help: 'skip files larger than this' },
  lite: { flag: '--lite', help: 'lite outputs: tree and contents without summary and metadata' },
  create_zip: { flag: '--zip', help: 'also build the ZIP bundle' },
  secrets: {
    flag: '--secrets',
    arg: '<mode>',
    help: 'redact (default): hide found secrets in the outputs; report: only list them; off',
  },
  max_tokens_per_part: {
    flag: '--max-tokens',
    arg: '<n>',
    help: 'cut the outputs into parts of at most n tokens (>= 1000)',
  },
  compress: {
    flag: '--compress',
    arg: '<mode>',
    help: 'signatures: keep declarations and signatures, elide function bodies with ⋯; none (default)',
  },
  remove_comments: {
    flag: '--remove-comments',
    help: 'remove comments (doc comments stay with --compress signatures)',
  },
  base_ref: {
    flag: '--base-ref',
    arg: '<ref>',
    help: 'change digest: only what changed since this branch, tag or commit (remote repositories)',
  },
} as const satisfies { [K in ScanOptionName]: { flag: `--${string}`; arg?: `<${string}>`; help: string } };

type Row<K extends ScanOptionName> = (typeof SCAN_OPTIONS)[K];
type ValueOf<S> = S extends { kind: 'switch' }
  ? boolean
  : S extends { kind: 'list' }
    ? string[]
    : S extends { kind: 'choice'; values: readonly (infer V)[] }
      ? V
      : S extends { kind: 'ref' }
        ? string | null
        : number | null;
type CamelCase<S extends string> = S extends `${infer Head}_${infer Tail}`
  ? `${Head}${Capitalize<CamelCase<Tail>>}`
  : S;

/** The options as the API spells them (request bodies, request.json, summary records). */
export type WireScanOptions = { -readonly [K in ScanOptionName]: ValueOf<Row<K>> };
/** The options as the engine spells them, every one applied (defaults filled in). */
export type EngineScanOptions = { -readonly [K in ScanOptionName as CamelCase<K>]: ValueOf<Row<K>> };
/** Options that select files: the ones a preview takes. */
export type PreviewOptionName = { [K in ScanOptionName]: Row<K> extends { output: true } ? never : K }[ScanOptionName];
export type PreviewScanOptions = Pick<WireScanOptions, PreviewOptionName>;

export const PREVIEW_OPTION_NAMES = SCAN_OPTION_NAMES.filter((name) => !isOutputOption(name)) as PreviewOptionName[];

export function isOutputOption(name: ScanOptionName): boolean {
  return 'output' in SCAN_OPTIONS[name];
}

/** `size_limit` -> `sizeLimit`. */
export function engineName<K extends ScanOptionName>(name: K): CamelCase<K> {
  return name.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase()) as CamelCase<K>;
}

/** What an option is when nobody sets it. */
export function defaultValue<K extends ScanOptionName>(name: K): WireScanOptions[K] {
  const row: ScanOptionSpec = SCAN_OPTIONS[name];
  const value = row.kind === 'switch' || row.kind === 'choice' ? row.default : row.kind === 'list' ? [] : null;
  return value as WireScanOptions[K];
}

export const DEFAULT_WIRE_SCAN_OPTIONS: WireScanOptions = Object.fromEntries(
  SCAN_OPTION_NAMES.map((name) => [name, defaultValue(name)]),
) as WireScanOptions;
export const DEFAULT_ENGINE_SCAN_OPTIONS: EngineScanOptions = toEngineOptions(DEFAULT_WIRE_SCAN_OPTIONS);

/** The API's snake_case options as the engine's camelCase ones. */
export function toEngineOptions(options: WireScanOptions): EngineScanOptions {
  return Object.fromEntries(SCAN_OPTION_NAMES.map((name) => [engineName(name), options[name]])) as EngineScanOptions;
}

/** The engine's options in the API's spelling and key order (summary records, summary.json). */
export function toWireOptions(options: EngineScanOptions): WireScanOptions {
  return Object.fromEntries(SCAN_OPTION_NAMES.map((name) => [name, options[engineName(name)]])) as WireScanOptions;
}

/** A preview's options as a whole set: the output options it does not take keep their defaults. */
export function withOutputDefaults(options: PreviewScanOptions): WireScanOptions {
  return { ...DEFAULT_WIRE_SCAN_OPTIONS, ...options };
}
