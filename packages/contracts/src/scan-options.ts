import { z } from 'zod';

// Limits on user-supplied globs and names (contract §8): caps keep pattern matching cheap and
// make pathological patterns (T16) a 400 rather than a slow scan.
export const MAX_PATTERNS = 50;
export const MAX_PATTERN_LENGTH = 256;

// eslint-disable-next-line no-control-regex
const NO_CONTROL = /^[^\u0000-\u001f\u007f]*$/;

const pattern = z
  .string()
  .min(1)
  .max(MAX_PATTERN_LENGTH)
  .regex(NO_CONTROL, 'must not contain control characters');
const patternList = z.array(pattern).max(MAX_PATTERNS);

/** A git ref name we are willing to pass to git: no option look-alikes, no `..`, no odd bytes. */
export const BranchName = z
  .string()
  .min(1)
  .max(200)
  .regex(/^(?!-)(?!.*\.\.)(?!.*\/\/)(?!.*\/$)(?!.*\.lock$)[A-Za-z0-9._+/-]+$/, 'must be a plain git branch or tag name')
  .meta({ description: 'Branch or tag to scan. Wins over a ref in the URL; without either, the remote default branch is used.', example: 'main' });

const DESCRIPTIONS = {
  exclude_dirs: 'Folder names (any depth) or repository-root-relative folder paths to skip, on top of the defaults (VCS, dependency, cache and editor folders).',
  include_patterns: 'gitignore-style globs on root-relative POSIX paths; when given, only matching files are kept. A pattern without `/` matches a name at any depth; `**` spans folders.',
  exclude_patterns: 'gitignore-style globs; matching files and folders are dropped. Exclude wins over include.',
  lite: 'Lite outputs: only the tree and file contents, without the summary, per-file metadata and asset list.',
  create_zip: 'Also build the ZIP bundle (outputs, assets/, manifest.json, summary.json, README.md).',
  tree_depth: 'Levels of the directory tree to draw; deeper levels collapse to `└── ...`. null draws all.',
  docs_only: 'Keep only files whose subcategory is `docs`.',
  sync_ignore: 'Apply the repository\'s `.gitignore` files (every level) and `.gittxtignore`.',
  skip_tree: 'Leave the directory tree out of every output.',
  size_limit: 'Skip files larger than this many bytes (reason `too_large`); the server per-file limit applies in any case.',
} as const;

export const ScanOptionFields = {
  exclude_dirs: patternList.default([]).meta({ description: DESCRIPTIONS.exclude_dirs, example: ['dist', 'test/fixtures'] }),
  include_patterns: patternList.default([]).meta({ description: DESCRIPTIONS.include_patterns, example: ['*.ts', 'docs/**'] }),
  exclude_patterns: patternList.default([]).meta({ description: DESCRIPTIONS.exclude_patterns, example: ['*.test.ts'] }),
  lite: z.boolean().default(false).meta({ description: DESCRIPTIONS.lite }),
  create_zip: z.boolean().default(false).meta({ description: DESCRIPTIONS.create_zip }),
  tree_depth: z.int().min(0).max(100).nullable().default(null).meta({ description: DESCRIPTIONS.tree_depth }),
  docs_only: z.boolean().default(false).meta({ description: DESCRIPTIONS.docs_only }),
  sync_ignore: z.boolean().default(true).meta({ description: DESCRIPTIONS.sync_ignore }),
  skip_tree: z.boolean().default(false).meta({ description: DESCRIPTIONS.skip_tree }),
  size_limit: z.int().min(1).nullable().default(null).meta({ description: DESCRIPTIONS.size_limit }),
};

export const ScanOptions = z.strictObject(ScanOptionFields).meta({ id: 'ScanOptions' });
export type ScanOptions = z.output<typeof ScanOptions>;

export const RepoPath = z
  .string()
  .min(1)
  .max(4096)
  .meta({
    description: 'Remote repository URL (https, the web forms `/tree/<ref>/<subdir>`, `/blob/…`, `/-/tree/…`, `/src/…`, or `git@host:owner/repo.git`) or an absolute server-local path inside ALLOWED_LOCAL_ROOTS.',
    example: 'https://github.com/octocat/Hello-World',
  });

export const ScanRequest = z
  .strictObject({ repo_path: RepoPath, branch: BranchName.optional(), ...ScanOptionFields })
  .meta({ id: 'ScanRequest', description: 'Body of POST /v1/scan. Unknown fields are rejected.' });
export type ScanRequest = z.output<typeof ScanRequest>;

const { lite: _lite, create_zip: _createZip, ...previewFields } = ScanOptionFields;
export const InspectRequest = z
  .strictObject({ repo_path: RepoPath, branch: BranchName.optional(), ...previewFields })
  .meta({ id: 'InspectRequest', description: 'Body of POST /v1/inspect: the selection options of a scan; nothing is written.' });
export type InspectRequest = z.output<typeof InspectRequest>;

// Query strings carry text: booleans as true/false/1/0, lists comma-separated or repeated.
const queryBool = z
  .enum(['true', 'false', '1', '0'])
  .transform((v) => v === 'true' || v === '1');
const queryList = z
  .union([z.string(), z.array(z.string())])
  .transform((v) => (Array.isArray(v) ? v : v.split(',')).map((s) => s.trim()).filter((s) => s.length > 0))
  .pipe(patternList);
const queryInt = (min: number, max: number) => z.string().regex(/^\d+$/, 'must be a whole number').transform(Number).pipe(z.int().min(min).max(max));

export const UploadQuery = z
  .strictObject({
    lite: queryBool.default(false).meta({ description: DESCRIPTIONS.lite }),
    create_zip: queryBool.default(false).meta({ description: DESCRIPTIONS.create_zip }),
    docs_only: queryBool.default(false).meta({ description: DESCRIPTIONS.docs_only }),
    sync_ignore: queryBool.default(true).meta({ description: DESCRIPTIONS.sync_ignore }),
    skip_tree: queryBool.default(false).meta({ description: DESCRIPTIONS.skip_tree }),
    tree_depth: queryInt(0, 100).nullable().default(null).meta({ description: DESCRIPTIONS.tree_depth }),
    size_limit: queryInt(1, Number.MAX_SAFE_INTEGER).nullable().default(null).meta({ description: DESCRIPTIONS.size_limit }),
    exclude_dirs: queryList.default([]).meta({ description: DESCRIPTIONS.exclude_dirs }),
    include_patterns: queryList.default([]).meta({ description: DESCRIPTIONS.include_patterns }),
    exclude_patterns: queryList.default([]).meta({ description: DESCRIPTIONS.exclude_patterns }),
    wait: queryBool.default(true).meta({ description: 'false answers 202 at once instead of waiting up to SCAN_WAIT_SECONDS.' }),
  });
export type UploadQuery = z.output<typeof UploadQuery>;

export const WaitQuery = z.strictObject({ wait: queryBool.default(true) });
