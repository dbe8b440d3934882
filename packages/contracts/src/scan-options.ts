import { z } from 'zod';
import { PREVIEW_OPTION_NAMES, SCAN_OPTION_NAMES, SCAN_OPTIONS } from './scan-option-table.js';
import type { PreviewOptionName, ScanOptionName, ScanOptionSpec } from './scan-option-table.js';
import { CallbackUrl } from './webhooks.js';

// Limits on user-supplied globs and names (docs/api.md, limits): caps keep pattern matching cheap and
// make pathological patterns (T16) a 400 rather than a slow scan.
export const MAX_PATTERNS = 50;
export const MAX_PATTERN_LENGTH = 256;

// eslint-disable-next-line no-control-regex
const NO_CONTROL = /^[^\u0000-\u001f\u007f]*$/;

const pattern = z.string().min(1).max(MAX_PATTERN_LENGTH).regex(NO_CONTROL, 'must not contain control characters');
const patternList = z.array(pattern).max(MAX_PATTERNS);

const REF_NAME = /^(?!-)(?!.*\.\.)(?!.*\/\/)(?!.*\/$)(?!.*\.lock$)[A-Za-z0-9._+/-]+$/;

/** A git ref name we are willing to pass to git: no option look-alikes, no `..`, no odd bytes. */
export const BranchName = z.string().min(1).max(200).regex(REF_NAME, 'must be a plain git branch or tag name').meta({
  description: 'Branch or tag to scan. Wins over a ref in the URL; without either, the remote default branch is used.',
  example: 'main',
});

/** A `ref` option: a branch or tag name, or a full commit id (which the same pattern lets through). */
const refName = z
  .string()
  .min(1)
  .max(200)
  .regex(REF_NAME, 'must be a plain git branch or tag name, or a full commit id');

type Row<K extends ScanOptionName> = (typeof SCAN_OPTIONS)[K];

/** An option's schema in a JSON body. */
function bodyField(row: ScanOptionSpec): z.ZodType {
  switch (row.kind) {
    case 'switch':
      return z.boolean().default(row.default).meta({ description: row.description });
    case 'list':
      return patternList.default([]).meta({ description: row.description, example: [...row.example] });
    case 'choice':
      return z.enum(row.values).default(row.default).meta({ description: row.description });
    case 'count': {
      const whole = row.max === undefined ? z.int().min(row.min) : z.int().min(row.min).max(row.max);
      return whole.nullable().default(null).meta({ description: row.description });
    }
    case 'ref':
      return refName.nullable().default(null).meta({ description: row.description, example: row.example });
  }
}

type ChoiceField<S> = S extends { kind: 'choice'; values: readonly (infer V extends string)[] }
  ? z.ZodDefault<z.ZodEnum<{ [W in V]: W }>>
  : never;

type BodyField<S> = S extends { kind: 'switch' }
  ? z.ZodDefault<z.ZodBoolean>
  : S extends { kind: 'list' }
    ? z.ZodDefault<typeof patternList>
    : S extends { kind: 'choice' }
      ? ChoiceField<S>
      : S extends { kind: 'ref' }
        ? z.ZodDefault<z.ZodNullable<typeof refName>>
        : z.ZodDefault<z.ZodNullable<z.ZodInt>>;

export const ScanOptionFields = Object.fromEntries(
  SCAN_OPTION_NAMES.map((name) => [name, bodyField(SCAN_OPTIONS[name])]),
) as {
  [K in ScanOptionName]: BodyField<Row<K>>;
};

export const ScanOptions = z.strictObject(ScanOptionFields).meta({ id: 'ScanOptions' });
export type ScanOptions = z.output<typeof ScanOptions>;

export const RepoPath = z.string().min(1).max(4096).meta({
  description:
    'Remote repository URL (https, the web forms `/tree/<ref>/<subdir>`, `/blob/…`, `/-/tree/…`, `/src/…`, or `git@host:owner/repo.git`) or an absolute server-local path inside ALLOWED_LOCAL_ROOTS.',
  example: 'https://github.com/octocat/Hello-World',
});

/** The header that carries a git credential for one request, as `git_token` does in a JSON body. */
export const GIT_TOKEN_HEADER = 'X-Git-Token';

/**
 * A git credential for this request only: printable ASCII without blanks, so it can travel in a
 * header too. Never stored in clear, logged or echoed (docs/operations.md, private repositories).
 */
export const GitToken = z
  .string()
  .min(1)
  .max(4096)
  .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without blanks (a token, or user:token)')
  .meta({
    description:
      "Credential for a private repository, for this request only: a token (the user name is the host's usual one: GitHub `x-access-token`, GitLab `oauth2`, Bitbucket `x-token-auth`, others `x-access-token`) or `user:token`. https URLs only (plain http to a loopback host in tests); refused for local paths and uploads. It reaches git through its environment only and is never stored in clear, logged or returned. The `X-Git-Token` header does the same.",
    writeOnly: true,
    example: 'github_pat_11AAAA…',
  });

export const ScanRequest = z
  .strictObject({
    repo_path: RepoPath,
    branch: BranchName.optional(),
    git_token: GitToken.optional(),
    callback_url: CallbackUrl.optional(),
    // Optional, not defaulted: a request setting, like callback_url, not an option of the scan.
    cache: z.boolean().optional().meta({
      description:
        'Remote repositories (default true): when an earlier scan of the same repository, commit and options (for a change digest, also the same commit behind `base_ref`) is still kept, complete this one at once from it (`cached_from` in the result); otherwise a scan of a whole repository takes each file an earlier scan processed (same path, git blob and text-shaping options, `secrets: redact`) from the file cache instead of fetching and reading it again. `false` forces a fresh scan: every file fetched and processed. Local paths and uploads are never served from either cache.',
    }),
    ...ScanOptionFields,
  })
  .meta({ id: 'ScanRequest', description: 'Body of POST /v1/scan. Unknown fields are rejected.' });
export type ScanRequest = z.output<typeof ScanRequest>;

const previewFields = Object.fromEntries(PREVIEW_OPTION_NAMES.map((name) => [name, ScanOptionFields[name]])) as Pick<
  typeof ScanOptionFields,
  PreviewOptionName
>;
export const InspectRequest = z
  .strictObject({
    repo_path: RepoPath,
    branch: BranchName.optional(),
    git_token: GitToken.optional(),
    ...previewFields,
    // Not a selection option: given, the preview estimates how many parts it would give.
    max_tokens_per_part: ScanOptionFields.max_tokens_per_part,
  })
  .meta({
    id: 'InspectRequest',
    description:
      'Body of POST /v1/inspect: the selection options of a scan, and `max_tokens_per_part` to estimate the parts it would give; nothing is written.',
  });
export type InspectRequest = z.output<typeof InspectRequest>;

// Query strings carry text: booleans as true/false/1/0, lists comma-separated or repeated.
const queryBool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');
const queryList = z
  .union([z.string(), z.array(z.string())])
  .transform((v) => (Array.isArray(v) ? v : v.split(',')).map((s) => s.trim()).filter((s) => s.length > 0))
  .pipe(patternList);
/** A whole number from `min` to `max` in a query string; one message for any other text, or the parameter given twice. */
export const queryInt = (min: number, max = Number.MAX_SAFE_INTEGER) => {
  const error = `must be a whole number from ${min}${max < Number.MAX_SAFE_INTEGER ? ` to ${max}` : ''}`;
  return z
    .string({ error })
    .regex(/^\d+$/, { error })
    .transform(Number)
    .pipe(z.int({ error }).min(min, { error }).max(max, { error }));
};

/** An option's schema as an upload query parameter. */
function queryField(row: ScanOptionSpec): z.ZodType {
  switch (row.kind) {
    case 'switch':
      return queryBool.default(row.default).meta({ description: row.description });
    case 'list':
      return queryList.default([]).meta({ description: row.description });
    case 'choice':
      return z.enum(row.values).default(row.default).meta({ description: row.description });
    case 'count':
      return queryInt(row.min, row.max).nullable().default(null).meta({ description: row.description });
    case 'ref':
      return refName.nullable().default(null).meta({ description: row.description });
  }
}

type QueryField<S> = S extends { kind: 'switch' }
  ? z.ZodDefault<typeof queryBool>
  : S extends { kind: 'list' }
    ? z.ZodDefault<typeof queryList>
    : S extends { kind: 'choice' }
      ? ChoiceField<S>
      : S extends { kind: 'ref' }
        ? z.ZodDefault<z.ZodNullable<typeof refName>>
        : z.ZodDefault<z.ZodNullable<ReturnType<typeof queryInt>>>;

// Switches first, then words and numbers, then lists: the short parameters lead in the API docs.
const QUERY_ORDER: readonly ScanOptionSpec['kind'][] = ['switch', 'choice', 'count', 'ref', 'list'];
const queryNames = QUERY_ORDER.flatMap((kind) => SCAN_OPTION_NAMES.filter((name) => SCAN_OPTIONS[name].kind === kind));

export const UploadQuery = z.strictObject({
  ...(Object.fromEntries(queryNames.map((name) => [name, queryField(SCAN_OPTIONS[name])])) as {
    [K in ScanOptionName]: QueryField<Row<K>>;
  }),
  callback_url: CallbackUrl.optional(),
  wait: queryBool
    .default(true)
    .meta({ description: 'false answers 202 at once instead of waiting up to SCAN_WAIT_SECONDS.' }),
});
export type UploadQuery = z.output<typeof UploadQuery>;

export const WaitQuery = z.strictObject({ wait: queryBool.default(true) });
