import type { ArtifactFormat, ScanResult, SummaryRecord } from '@reposcan/contracts';

type ArtifactInfo = NonNullable<SummaryRecord['artifacts'][ArtifactFormat]>;
import type { ScanReport } from '@reposcan/core';

export function downloadUrl(scanId: string, format: ArtifactFormat, part?: number): string {
  return `/v1/download/${scanId}?format=${format}${part === undefined ? '' : `&part=${part}`}`;
}

/** The summary record (GET /v1/summary): metadata only, never file contents. */
export function buildSummaryRecord(
  scanId: string,
  report: ScanReport,
  createdAt: string,
  completedAt: string,
): SummaryRecord {
  const artifacts: SummaryRecord['artifacts'] = {};
  for (const a of report.artifacts)
    artifacts[a.format] = { url: downloadUrl(scanId, a.format), bytes: a.bytes, sha256: a.sha256 };
  for (const output of report.parts ?? [])
    artifacts[output.format] = {
      url: downloadUrl(scanId, output.format),
      bytes: output.bytes,
      sha256: output.sha256,
      parts: output.parts.map((p) => ({
        part: p.part,
        url: downloadUrl(scanId, output.format, p.part),
        bytes: p.bytes,
        sha256: p.sha256,
        tokens: p.tokens,
      })),
    };
  return {
    scan_id: scanId,
    state: 'completed',
    repository: report.repository,
    options: report.options,
    encoding: report.encoding,
    summary: report.summary,
    files: report.files,
    assets: report.assets,
    skipped: report.skipped,
    artifacts,
    timings: { ...report.timings },
    created_at: createdAt,
    completed_at: completedAt,
    ...(report.secrets === undefined ? {} : { secrets: report.secrets }),
    ...(report.compression === undefined ? {} : { compression: report.compression }),
    ...(report.changes === undefined ? {} : { changes: report.changes }),
  };
}

/** What a result is derived from: a summary record, of whose file list only the length is read. */
export type SummaryForResult = Omit<SummaryRecord, 'files'> & { files: { readonly length: number } };

/**
 * The scan result (the 201 `data`, `result` in the status), derived from the
 * PUBLISHED summary record, so whichever attempt published, state and artifacts agree.
 */
export function resultFromSummary(summary: SummaryForResult, artifactDir: string): ScanResult {
  const repo = summary.repository;
  return {
    scan_id: summary.scan_id,
    repo_name: repo.name,
    branch: repo.branch,
    commit: repo.commit,
    source: { type: repo.source, url: repo.url },
    num_textual_files: summary.files.length,
    num_non_textual_files: summary.assets.length,
    summary: summary.summary,
    artifacts: summary.artifacts,
    artifact_dir: artifactDir,
    skipped_count: summary.skipped.length,
    ...(summary.secrets === undefined ? {} : { secrets: summary.secrets }),
    ...(summary.compression === undefined ? {} : { compression: summary.compression }),
    ...(summary.cached_from === undefined ? {} : { cached_from: summary.cached_from }),
    ...(summary.changes === undefined ? {} : { changes: changeTotals(summary.changes) }),
  };
}

/**
 * The summary record of a scan served from an earlier one's result: the same files, counts and
 * artifacts (their bytes are shared), under this scan's id, URLs and times, naming the earlier.
 */
export function summaryFromEarlier(
  earlier: SummaryRecord,
  fromId: string,
  scanId: string,
  createdAt: string,
  completedAt: string,
): SummaryRecord {
  const artifacts: SummaryRecord['artifacts'] = {};
  for (const [format, info] of Object.entries(earlier.artifacts) as [ArtifactFormat, ArtifactInfo][])
    artifacts[format] = {
      ...info,
      url: downloadUrl(scanId, format),
      ...(info.parts ? { parts: info.parts.map((p) => ({ ...p, url: downloadUrl(scanId, format, p.part) })) } : {}),
    };
  return {
    ...earlier,
    scan_id: scanId,
    artifacts,
    created_at: createdAt,
    completed_at: completedAt,
    cached_from: fromId,
  };
}

/** The digest's block without its list of paths: the result stays small. */
function changeTotals(changes: NonNullable<SummaryRecord['changes']>): NonNullable<ScanResult['changes']> {
  const { files: _files, ...totals } = changes;
  return totals;
}
