// Secret detection's shared words: what a file thread answers for one content (detect-secrets.ts)
// and how big a content may be to be checked at all. Plain data, so it crosses threads as is.

/**
 * Contents over this many bytes are not checked (listed in `secrets.not_checked`): secretlint's
 * rules run over the whole text, and one such file would hold a file thread for seconds while
 * the batches behind it wait.
 */
export const SECRETS_MAX_BYTES = 2 << 20;

/** One finding, without the secret: where it starts and which rule saw it. */
export interface SecretFinding {
  /** From 1, in the original text. */
  line: number;
  /** From 1, in UTF-16 code units. */
  column: number;
  /** secretlint's rule id without its package prefix: `aws`, `github`, `privatekey` … */
  rule: string;
  /** The rule's message id (`GITHUB_TOKEN`, `IncomingWebhook` …). */
  kind: string;
}

/** What a check of one content found; `redacted` is the text with each finding replaced, only when there was one. */
export interface SecretScan {
  findings: SecretFinding[];
  redacted?: Uint8Array;
}

/** What stands in the outputs where a finding was. */
export function redactionMark(rule: string): string {
  return `[REDACTED:${rule}]`;
}

/** A scan's or preview's findings, as summaries and results carry them (`secrets`; absent with `off`). */
export interface SecretsSummary {
  mode: 'redact' | 'report';
  count: number;
  /** `in: 'diff'`: found in the file's diff of a change digest (`line` is then the diff's). */
  findings: Array<SecretFinding & { path: string; in?: 'diff' }>;
  /** Textual files over SECRETS_MAX_BYTES. */
  not_checked: string[];
}
