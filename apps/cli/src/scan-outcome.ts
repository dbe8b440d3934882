import type { ArtifactFormat, CompressionReport, SecretsReport } from '@reposcan/client';

export interface WrittenFile {
  format: ArtifactFormat;
  path: string;
  bytes: number;
  sha256: string;
}

/** What `reposcan scan` reports: the `--json` document, and the lines printed without it. */
export interface ScanOutcome {
  /** The server's id; null for a --local scan. */
  scan_id: string | null;
  state: 'completed';
  /** The API's scan result (server), or the engine's equivalent fields (--local). */
  result: {
    repo_name: string;
    branch: string | null;
    num_textual_files: number;
    num_non_textual_files: number;
    skipped_count: number;
    summary: {
      total_files: number;
      estimated_tokens: number;
      formatted: { total_size: string; estimated_tokens: string };
    };
    /** What secret detection found; absent with `--secrets off`. */
    secrets?: SecretsReport;
    /** What compressed code did; absent with neither `--compress` nor `--remove-comments`. */
    compression?: CompressionReport;
  } & Record<string, unknown>;
  files: WrittenFile[];
  /** `<repo>.summary.json` beside the artifacts: every file and every skipped path with its reason. */
  summary_file: { path: string; bytes: number };
}
