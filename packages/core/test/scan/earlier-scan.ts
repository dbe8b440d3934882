import { join } from 'node:path';
import { ARTIFACT_FILE_NAMES } from '../../src/artifacts/artifact-names.js';
import type { EarlierScan } from '../../src/scan/carry-forward.js';
import type { ScanReport } from '../../src/scan/run-scan.js';

/** A finished scan (run with `keepLayout`, its outputs in `outDir`) as a worker keeps it for the next commit. */
export function earlierScanOf(report: ScanReport, outDir: string): Omit<EarlierScan, 'changed'> {
  return {
    tree: report.tree,
    files: report.files,
    assets: report.assets,
    skipped: report.skipped,
    secrets: report.secrets ?? null,
    layout: report.layout as EarlierScan['layout'],
    outputs: {
      txt: join(outDir, ARTIFACT_FILE_NAMES.txt),
      md: join(outDir, ARTIFACT_FILE_NAMES.md),
      json: join(outDir, ARTIFACT_FILE_NAMES.json),
    },
  };
}

/** A report as a carried scan and a fresh one must agree on it: timings, the carried count and file names aside. */
export function comparableReport(report: ScanReport): object {
  const { timings: _t, carried: _c, artifacts, ...rest } = report;
  return { ...rest, artifacts: artifacts.map(({ file: _f, ...a }) => a) };
}
