// Scans made up here, for the tools and their digests without a scan run: a lite JSON output of
// given files, and the summary record that goes with it.
import type { SummaryRecord } from '@reposcan/contracts';

export const SCAN_ID = '3f0c2a51-8d7e-4b1a-9c3e-2f6d5b4a1e90';

/** A lite JSON output (path and content only) of `files`, as one part. */
export function liteJson(files: Record<string, string>, tree = 'made\n'): string {
  const objects = Object.entries(files).map(([path, content]) => JSON.stringify({ path, content }));
  return `{\n  "tree": ${JSON.stringify(tree)},\n  "files": [\n    ${objects.join(',\n    ')}\n  ]\n}\n`;
}

/** The summary of a lite scan of `files` (textual) and `assets` (non-textual paths), counts made up. */
export function madeSummary(files: Record<string, string> = {}, assets: readonly string[] = []): SummaryRecord {
  return {
    scan_id: SCAN_ID,
    repository: { name: 'made', source: 'local', url: null, branch: null, commit: null, subdir: null },
    encoding: 'o200k_base',
    options: { lite: true, skip_tree: false },
    summary: {},
    files: Object.entries(files).map(([path, content]) => ({
      path,
      subcategory: 'code',
      size_bytes: Buffer.byteLength(content),
      tokens: content.length,
    })),
    assets: assets.map((path) => ({ path, subcategory: 'image', size_bytes: 100 })),
    skipped: [],
  } as unknown as SummaryRecord;
}
