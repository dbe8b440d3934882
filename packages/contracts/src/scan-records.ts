import { z } from 'zod';
import { ERROR_CODES } from './error-codes.js';
import { ScanOptions } from './scan-options.js';
import {
  ARTIFACT_FORMATS,
  ASSET_SUBCATEGORIES,
  SECRETS_MODES,
  COMPRESS_MODES,
  SKIP_REASON_MEANINGS,
  SKIP_REASONS,
  TEXT_SUBCATEGORIES,
  TOKEN_ENCODINGS,
} from './vocabulary.js';
import { WebhookDelivery } from './webhooks.js';

export const SCAN_ID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
export const ScanId = z
  .string()
  .regex(SCAN_ID_PATTERN)
  .meta({ description: 'Server-made lowercase UUID v4.', example: '3f0c2a51-8d7e-4b1a-9c3e-2f6d5b4a1e90' });

export function isScanId(value: unknown): value is string {
  return typeof value === 'string' && SCAN_ID_PATTERN.test(value);
}

export const TokenEncoding = z.enum(TOKEN_ENCODINGS);
export type TokenEncoding = z.output<typeof TokenEncoding>;

export const SCAN_STATES = ['queued', 'running', 'completed', 'failed', 'cancelled'] as const;
export const ScanState = z.enum(SCAN_STATES).meta({ id: 'ScanState' });
export type ScanState = z.output<typeof ScanState>;
export const TERMINAL_STATES: readonly ScanState[] = ['completed', 'failed', 'cancelled'];

export const SCAN_PHASES = ['queued', 'clone', 'extract', 'walk', 'read', 'render', 'zip', 'publish', 'done'] as const;
export const ScanProgress = z
  .object({
    phase: z
      .enum(SCAN_PHASES)
      .describe(
        "What the worker is doing. Reading and counting start while the walk is still listing files: during `walk`, `files_total` is the number found so far and grows; from `read` on it is final, but for `zip`, whose counts are of the ZIP bundle's entries written.",
      ),
    files_done: z.int().min(0).describe('Files read, classified and counted so far.'),
    files_total: z
      .int()
      .min(0)
      .describe(
        "Files to process: found so far during `walk`, all of them from `read` on (in `zip`, the bundle's entries).",
      ),
  })
  .meta({ id: 'ScanProgress' });
export type ScanProgress = z.output<typeof ScanProgress>;

export const SourceType = z.enum(['remote', 'local', 'upload']);
export type SourceType = z.output<typeof SourceType>;

export const FailureInfo = z.object({ code: z.enum(ERROR_CODES), message: z.string() }).meta({ id: 'ScanFailure' });
export type FailureInfo = z.output<typeof FailureInfo>;

const TEXT_SUBCATEGORY = z.enum(TEXT_SUBCATEGORIES);
const ASSET_SUBCATEGORY = z.enum(ASSET_SUBCATEGORIES);
const SUBCATEGORY = z.union([TEXT_SUBCATEGORY, ASSET_SUBCATEGORY]);

// A scan counts tokens exactly. The API first named those counts `estimated_tokens` (totals) and
// `tokens_estimate` (per file); clients read them, so they stay, next to `tokens`, which says
// what they are. Inspect's counts are estimates and keep only the old names.
const SAME_AS_TOKENS =
  'The same exact count as `tokens`, under the name the API first gave it; kept for compatibility.';

const Replacements = z.int().min(1).optional().meta({
  description: 'Characters that could not be decoded and are shown as U+FFFD; absent when there were none.',
});

const sizeFields = { total_files: z.int(), total_size: z.int().meta({ description: 'Bytes over every kept file.' }) };
const typeFields = {
  file_type_breakdown: z.record(z.string(), z.int()),
  tokens_by_type: z.record(z.string(), z.int()),
  // Records written before it existed read as 0: nothing was counted then.
  files_with_replacements: z.int().min(0).default(0).meta({
    description:
      'Textual files with characters that could not be decoded, shown as U+FFFD; each has `replacements` in `files`.',
  }),
};

/** Reads a record written before `tokens` existed: the exact count is there under its first name. */
function addExactName(value: unknown, legacy: string): unknown {
  if (typeof value !== 'object' || value === null || 'tokens' in value || !(legacy in value)) return value;
  const fields = value as Record<string, unknown>;
  return { ...fields, tokens: fields[legacy] };
}

export const SummaryTotals = z
  .preprocess(
    (value) => {
      const totals = addExactName(value, 'estimated_tokens') as { formatted?: unknown };
      return typeof totals === 'object' && totals !== null && totals.formatted !== undefined
        ? { ...totals, formatted: addExactName(totals.formatted, 'estimated_tokens') }
        : totals;
    },
    z.object({
      ...sizeFields,
      tokens: z.int().meta({ description: "Exact BPE count over every textual file, in the scan's encoding." }),
      estimated_tokens: z.int().meta({ description: SAME_AS_TOKENS }),
      ...typeFields,
      formatted: z.object({
        total_size: z.string().meta({ example: '28.1 kB' }),
        tokens: z.string().meta({ description: '`tokens`, rounded for people.', example: '3.0k' }),
        estimated_tokens: z.string().meta({ description: SAME_AS_TOKENS, example: '3.0k' }),
      }),
    }),
  )
  .meta({ id: 'SummaryTotals' });

export const InspectSummaryTotals = z
  .object({
    ...sizeFields,
    estimated_tokens: z
      .int()
      .meta({ description: 'A fast estimate (within a few per cent of the exact count); a scan counts exactly.' }),
    ...typeFields,
    formatted: z.object({
      total_size: z.string().meta({ example: '28.1 kB' }),
      estimated_tokens: z.string().meta({ example: '3.0k' }),
    }),
  })
  .meta({ id: 'InspectSummaryTotals' });

/**
 * What secret detection found (absent with `secrets: off`, and in records written before it
 * existed). Never the secret itself nor any part of it: where it is and which rule saw it.
 */
export const SecretsReport = z
  .object({
    mode: z.enum(SECRETS_MODES).exclude(['off']).meta({
      description: '`redact`: each finding is `[REDACTED:<rule>]` in the outputs; `report`: the outputs are unchanged.',
    }),
    count: z.int().min(0).meta({ description: 'Findings over every checked file.' }),
    findings: z
      .array(
        z.object({
          path: z.string(),
          line: z.int().min(1).meta({ description: 'Line of the start of the finding, from 1, in the original file.' }),
          column: z.int().min(1).meta({ description: 'Column (UTF-16 code units, from 1) on that line.' }),
          rule: z.string().meta({
            description: "secretlint's rule, without its package prefix (`aws`, `github`, `privatekey` …).",
            example: 'github',
          }),
          kind: z.string().meta({ description: "The rule's message id: what it saw.", example: 'GITHUB_TOKEN' }),
          in: z.literal('diff').optional().meta({
            description:
              "Set when the finding is in the file's diff of a change digest (`base_ref`); `line` is then a line of the diff.",
          }),
        }),
      )
      .meta({ description: 'In walk order; a file may have several.' }),
    not_checked: z.array(z.string()).meta({
      description: 'Textual files not checked because they are over the detection cap (2 MiB).',
    }),
  })
  .meta({ id: 'SecretsReport' });
export type SecretsReport = z.output<typeof SecretsReport>;

const NotCompressedReason = z.enum(['too_large', 'timeout', 'parse_error']).meta({
  description:
    '`too_large`: over the 1 MiB cap; `timeout`: the parse ran too long (over its budget of parser steps per KiB, or 10 s); `parse_error`: the parser found a syntax error.',
});

/**
 * What compressed code and comment removal did (absent with neither option, and in records written
 * before they existed). Only the files they could not transform are listed by name; each file's
 * own entry carries its `compression`.
 */
export const CompressionReport = z
  .object({
    compress: z.enum(COMPRESS_MODES),
    remove_comments: z.boolean(),
    files: z.int().min(0).meta({ description: 'Files in a language it knows that were transformed.' }),
    tokens_before: z.int().min(0).meta({
      description: 'Their tokens before (exact in a scan, estimated in a preview).',
    }),
    tokens_after: z.int().min(0).meta({ description: 'Their tokens as the outputs hold them.' }),
    not_compressed: z
      .array(z.object({ path: z.string(), reason: NotCompressedReason }))
      .meta({ description: 'Files in such a language kept as they are, in walk order.' }),
  })
  .meta({ id: 'CompressionReport' });
export type CompressionReport = z.output<typeof CompressionReport>;
const CHANGE_STATUS = z.enum(['added', 'modified', 'renamed', 'deleted']);
const changeDigestFields = {
  base_ref: z.string().meta({ description: 'The `base_ref` asked for.' }),
  base_commit: z.string().meta({ description: 'The commit `base_ref` named when it was fetched.' }),
  head_commit: z.string().nullable().meta({ description: 'The scanned commit.' }),
  counts: z
    .object({
      added: z.int(),
      modified: z.int(),
      renamed: z.int(),
      deleted: z.int(),
      binary: z.int().meta({ description: 'Of the above, files listed without diff or content.' }),
    })
    .meta({ description: 'Changed paths the digest kept (after the scan options filtered them), by kind of change.' }),
};
/** A change digest's commits and counts (`base_ref`): in the scan result. */
export const ChangeDigestTotals = z
  .object(changeDigestFields)
  .meta({ id: 'ChangeDigestTotals', description: 'Present when the scan is a change digest (`base_ref`).' });
/** The same, with every changed path: in the summary record. */
export const ChangeDigestReport = z
  .object({
    ...changeDigestFields,
    files: z
      .array(
        z.object({
          path: z
            .string()
            .meta({ description: "Path in the scanned commit; a deleted file's path in the base commit." }),
          status: CHANGE_STATUS,
          old_path: z.string().nullable().meta({ description: "A renamed file's path in the base commit." }),
          similarity: z.int().nullable().meta({ description: "A renamed file's similarity index (0-100), git's." }),
          binary: z.boolean().meta({ description: 'Listed without diff or content.' }),
          diff_tokens: z
            .int()
            .meta({ description: "Tokens of the file's diff as the outputs hold it (0 for a binary file)." }),
        }),
      )
      .meta({ description: "In git's order (by path)." }),
  })
  .meta({ id: 'ChangeDigestReport', description: 'Present when the scan is a change digest (`base_ref`).' });

export const ArtifactFormat = z.enum(ARTIFACT_FORMATS);
export type ArtifactFormat = z.output<typeof ArtifactFormat>;
export const ArtifactPart = z
  .object({
    part: z.int().min(1),
    url: z.string().meta({ example: '/v1/download/3f0c2a51-8d7e-4b1a-9c3e-2f6d5b4a1e90?format=md&part=2' }),
    bytes: z.int(),
    sha256: z.string(),
    tokens: z.int().meta({ description: "The part's exact token count in the scan's encoding, every byte counted." }),
  })
  .meta({ id: 'ArtifactPart' });
export const ArtifactInfo = z.object({
  url: z.string().meta({ example: '/v1/download/3f0c2a51-8d7e-4b1a-9c3e-2f6d5b4a1e90?format=md' }),
  bytes: z.int().meta({ description: 'Size of the output; of all its parts together when it is in parts.' }),
  sha256: z
    .string()
    .meta({ description: 'SHA-256 of the output; of its parts one after the other when it is in parts.' }),
  parts: z.array(ArtifactPart).optional().meta({
    description:
      "With `max_tokens_per_part`: the output's parts, from 1. Download each with `&part=N`; the URL without it answers 409 `PART_REQUIRED`.",
  }),
});
export const ArtifactMap = z.partialRecord(ArtifactFormat, ArtifactInfo).meta({ id: 'Artifacts' });

const CachedFrom = ScanId.optional().meta({
  description:
    "Present when the scan was completed at once from an earlier completed scan of the same repository, commit and options (the commit cache): that scan's id. The artifacts are the same bytes; `scan_id`, URLs and times are this scan's own.",
});

export const ScanResult = z
  .object({
    scan_id: ScanId,
    repo_name: z.string().meta({
      description:
        "The repository's own name (`gittxt`, not `owner/gittxt`); for uploads the unwrapped folder's or the file's name.",
    }),
    branch: z.string().nullable(),
    commit: z.string().nullable().meta({ description: 'Commit SHA scanned (remote sources).' }),
    source: z.object({ type: SourceType, url: z.string().nullable() }),
    num_textual_files: z.int(),
    num_non_textual_files: z.int(),
    summary: SummaryTotals,
    artifacts: ArtifactMap,
    artifact_dir: z.string().meta({ description: 'Folder of the artifacts, relative to DATA_DIR.' }),
    skipped_count: z.int(),
    secrets: SecretsReport.optional(),
    compression: CompressionReport.optional(),
    cached_from: CachedFrom,
    changes: ChangeDigestTotals.optional(),
  })
  .meta({ id: 'ScanResult' });
export type ScanResult = z.output<typeof ScanResult>;

/**
 * The name of the API key that created a scan (never the key): only that key, or a key with
 * scope=admin, may see or delete the scan. Absent when API keys are off, and on scans made before.
 */
export const ScanOwner = z.string().meta({
  description:
    'Name of the API key that created the scan (when the server has API keys). Only that key, or an admin key, can see or delete it.',
});

/** `state.json`: the scan's state on the shared volume, replaced atomically on every change. */
export const ScanStateRecord = z
  .object({
    version: z.literal(1),
    scan_id: ScanId,
    state: ScanState,
    source: z.object({ type: SourceType, url: z.string().nullable() }),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
    started_at: z.iso.datetime().nullable(),
    completed_at: z.iso.datetime().nullable(),
    attempt: z.int().min(0).meta({
      description:
        'Runs of the scan so far, the current one included; 0 until the first starts. A run that killed its worker counts, so a `WORKER_CRASHED` failure shows how many runs were made; a run handed back by a worker shutting down runs again under the same number.',
    }),
    progress: ScanProgress,
    error: FailureInfo.nullable(),
    result: ScanResult.nullable(),
    owner: ScanOwner.optional(),
  })
  .meta({ id: 'ScanStateRecord' });
export type ScanStateRecord = z.output<typeof ScanStateRecord>;

/** `data` of GET /v1/scans/{id} and of every SSE event. */
export const ScanStatus = ScanStateRecord.omit({ version: true })
  .extend({
    status_url: z.string(),
    events_url: z.string(),
    webhook: WebhookDelivery.optional().meta({
      description: 'The completion webhook, when the scan was submitted with `callback_url`.',
    }),
  })
  .meta({ id: 'ScanStatus' });
export type ScanStatus = z.output<typeof ScanStatus>;

export function statusUrl(scanId: string): string {
  return `/v1/scans/${scanId}`;
}

export function eventsUrl(scanId: string): string {
  return `/v1/scans/${scanId}/events`;
}

/** A state record as the API shows it (GET /v1/scans/{id}, events, webhook deliveries). */
export function toScanStatus(record: ScanStateRecord, webhook?: WebhookDelivery | null): ScanStatus {
  const { version: _version, ...rest } = record;
  return {
    ...rest,
    status_url: statusUrl(record.scan_id),
    events_url: eventsUrl(record.scan_id),
    ...(webhook ? { webhook } : {}),
  };
}

export const ScanAccepted = z
  .object({ scan_id: ScanId, state: ScanState, status_url: z.string(), events_url: z.string() })
  .meta({ id: 'ScanAccepted' });
export type ScanAccepted = z.output<typeof ScanAccepted>;

export const TextFileEntry = z.preprocess(
  (value) => addExactName(value, 'tokens_estimate'),
  z.object({
    path: z.string(),
    subcategory: TEXT_SUBCATEGORY,
    size_bytes: z.int().meta({ description: 'Bytes of the file as it is in the repository, before any redaction.' }),
    redactions: z.int().min(1).optional().meta({
      description:
        "Secrets replaced by `[REDACTED:<rule>]` in this file's text in the outputs (`secrets: redact`); absent when none. `tokens` counts the redacted text.",
    }),
    tokens: z.int().meta({
      description:
        "Exact BPE count of the file's text as the outputs hold it (after any redaction), in the scan's encoding.",
    }),
    tokens_estimate: z.int().meta({ description: SAME_AS_TOKENS }),
    url: z.string(),
    encoding: z.string().optional().meta({
      description:
        "Source encoding when the text is not the file's bytes: a legacy encoding, UTF-16/32, or `UTF-8` for UTF-8 with broken bytes.",
    }),
    replacements: Replacements,
    compression: z
      .object({
        result: z.enum(['compressed', 'too_large', 'timeout', 'parse_error']),
        tokens_before: z.int().min(0).meta({ description: 'Tokens of the text before it was transformed.' }),
      })
      .optional()
      .meta({
        description:
          'With `compress` or `remove_comments`, for a file in a language they know: `compressed` (`tokens` then counts the transformed text), or why it was kept as it is.',
      }),
  }),
);
export const AssetEntry = z.object({
  path: z.string(),
  subcategory: ASSET_SUBCATEGORY,
  size_bytes: z.int(),
  url: z.string(),
});
export const SkippedEntry = z.object({
  path: z.string().meta({ description: 'A pruned folder is listed once, with a trailing `/`.' }),
  reason: z.enum(SKIP_REASONS).meta({
    description: `Why it was left out: ${SKIP_REASONS.map((reason) => (SKIP_REASON_MEANINGS[reason] ? `\`${reason}\` (${SKIP_REASON_MEANINGS[reason]})` : `\`${reason}\``)).join(', ')}.`,
  }),
});

export const SummaryRecord = z
  .object({
    scan_id: ScanId,
    state: ScanState,
    repository: z.object({
      name: z.string(),
      source: SourceType,
      url: z.string().nullable(),
      branch: z.string().nullable(),
      commit: z.string().nullable(),
      subdir: z.string().nullable(),
    }),
    options: ScanOptions,
    encoding: TokenEncoding,
    summary: SummaryTotals,
    files: z.array(TextFileEntry),
    assets: z.array(AssetEntry),
    skipped: z.array(SkippedEntry),
    artifacts: ArtifactMap,
    timings: z.record(z.string(), z.number()).meta({ description: 'Milliseconds per phase.' }),
    created_at: z.iso.datetime(),
    completed_at: z.iso.datetime(),
    secrets: SecretsReport.optional(),
    compression: CompressionReport.optional(),
    cached_from: CachedFrom,
    changes: ChangeDigestReport.optional(),
  })
  .meta({ id: 'SummaryRecord' });
export type SummaryRecord = z.output<typeof SummaryRecord>;

export const InspectFileEntry = z.object({
  path: z.string(),
  subcategory: SUBCATEGORY,
  size_bytes: z.int(),
  tokens_estimate: z.int().meta({ description: 'Fast estimate; 0 for non-textual files.' }),
  url: z.string(),
  replacements: Replacements,
});

export const InspectResult = z
  .object({
    repository: z.object({
      name: z.string(),
      branch: z.string().nullable(),
      commit: z.string().nullable(),
      tree_summary: z.string(),
    }),
    summary: InspectSummaryTotals,
    files: z.array(InspectFileEntry).meta({ description: 'Every kept file, textual and not.' }),
    skipped_count: z.int(),
    secrets: SecretsReport.optional(),
    compression: CompressionReport.optional(),
    parts_estimate: z.int().optional().meta({
      description:
        'With `max_tokens_per_part`: about how many parts the txt output would take, from the estimated counts and guessed header sizes (md and json may take a few more). An estimate: the scan counts exactly.',
    }),
  })
  .meta({ id: 'InspectResult' });
export type InspectResult = z.output<typeof InspectResult>;

/** `request.json`: what was accepted, written once; the job payload carries only the id. */
export const ScanRequestRecord = z.object({
  version: z.literal(1),
  scan_id: ScanId,
  source: z.discriminatedUnion('type', [
    z.object({
      type: z.literal('remote'),
      repo_path: z.string(),
      branch: z.string().nullable(),
      /** The request carried a git token: the worker finds it sealed in the credential vault, never here. */
      credential: z.literal('request').optional(),
      /**
       * The ref as the API's `git ls-remote` resolved it when it accepted the scan (it lists the
       * remote for a repository scanned here before, to ask the commit cache): a worker that starts
       * soon after clones it as it is, without listing the remote again.
       */
      resolved: z.object({ branch: z.string(), commit: z.string(), subdir: z.string().nullable() }).optional(),
    }),
    z.object({ type: z.literal('local'), repo_path: z.string() }),
    z.object({ type: z.literal('upload'), file_name: z.string() }),
  ]),
  options: ScanOptions,
  encoding: TokenEncoding,
  created_at: z.iso.datetime(),
  /** Where the completion webhook goes; kept on the volume only, never logged or shown in full. */
  callback_url: z.string().optional(),
  /** The request said `cache: false`: nothing an earlier scan did is reused, neither its result nor its files. */
  fresh: z.literal(true).optional(),
});
export type ScanRequestRecord = z.output<typeof ScanRequestRecord>;

/**
 * A deleted scan's completion webhook, kept on the volume apart from the scan's folder until it is
 * delivered: where to, the scan's last state, and how its delivery went so far.
 */
export const KeptWebhook = z.object({
  callback_url: z.string(),
  record: ScanStateRecord,
  delivery: WebhookDelivery.nullable(),
});
export type KeptWebhook = z.output<typeof KeptWebhook>;
