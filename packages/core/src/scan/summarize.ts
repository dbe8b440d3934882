import { formatSize, formatTokens } from '../render/human-format.js';
import type {
  AssetRecord,
  ScanSummaryTotals,
  ScannedFileRecord,
  Subcategory,
  SummaryTotals,
  TextFileRecord,
  TextSubcategory,
} from '../types.js';

/** Totals over what the scan kept: textual files and non-textual assets. Exact counts (a full scan's records) are totalled under `tokens` too. */
export function summarize(files: ScannedFileRecord[], assets: AssetRecord[], exact: true): ScanSummaryTotals;
export function summarize(files: TextFileRecord[], assets: AssetRecord[], exact?: false): SummaryTotals;
export function summarize(files: TextFileRecord[], assets: AssetRecord[], exact = false): SummaryTotals {
  const breakdown: Partial<Record<Subcategory, number>> = {};
  const tokensByType: Partial<Record<TextSubcategory, number>> = {};
  let totalSize = 0;
  let tokens = 0;
  let withReplacements = 0;
  for (const file of files) {
    if (file.replacements) withReplacements++;
    breakdown[file.subcategory] = (breakdown[file.subcategory] ?? 0) + 1;
    tokensByType[file.subcategory] = (tokensByType[file.subcategory] ?? 0) + file.tokens_estimate;
    totalSize += file.size_bytes;
    tokens += file.tokens_estimate;
  }
  for (const asset of assets) {
    breakdown[asset.subcategory] = (breakdown[asset.subcategory] ?? 0) + 1;
    totalSize += asset.size_bytes;
  }
  const formatted = formatTokens(tokens);
  return {
    total_files: files.length + assets.length,
    total_size: totalSize,
    ...(exact ? { tokens } : {}),
    estimated_tokens: tokens,
    file_type_breakdown: sortKeys(breakdown),
    tokens_by_type: sortKeys(tokensByType),
    files_with_replacements: withReplacements,
    formatted: {
      total_size: formatSize(totalSize),
      ...(exact ? { tokens: formatted } : {}),
      estimated_tokens: formatted,
    },
  };
}

function sortKeys<T extends Record<string, number | undefined>>(record: T): T {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : 1))) as T;
}
