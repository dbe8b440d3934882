import type { InspectResult } from '@reposcan/client';

/**
 * The preview as a plain table (path, type, bytes, estimated tokens) and a totals line.
 * Numbers stay exact integers so the output can be sorted and summed by other tools.
 */
export function renderInspectTable(preview: InspectResult, withTree: boolean): string {
  const header = ['PATH', 'TYPE', 'BYTES', 'TOKENS'];
  const rows = preview.files.map((f) => [f.path, f.subcategory, String(f.size_bytes), String(f.tokens_estimate)]);
  // A loop, not Math.max(...column): a preview lists up to MAX_SCAN_FILES rows, and spreading
  // that many arguments overflows the stack.
  const widths = header.map((h, i) => rows.reduce((widest, r) => Math.max(widest, r[i]!.length), h.length));
  const line = (cells: string[]): string =>
    cells
      .map((cell, i) => (i >= 2 ? cell.padStart(widths[i]!) : i === cells.length - 1 ? cell : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  const s = preview.summary;
  const repo = preview.repository;
  const totals =
    `${s.total_files} files, ${s.formatted.total_size}, ~${s.formatted.estimated_tokens} tokens (estimate)` +
    `, ${preview.skipped_count} skipped · ${repo.name}${repo.branch ? ` @ ${repo.branch}` : ''}${repo.commit ? ` (${repo.commit.slice(0, 12)})` : ''}`;
  const parts = [];
  if (withTree && repo.tree_summary) parts.push(repo.tree_summary.trimEnd(), '');
  parts.push(line(header));
  for (const row of rows) parts.push(line(row));
  parts.push('', totals);
  if (preview.parts_estimate !== undefined)
    parts.push(
      `about ${preview.parts_estimate} part${preview.parts_estimate === 1 ? '' : 's'} of the txt output (estimate)`,
    );
  const secrets = preview.secrets;
  if (secrets && secrets.count > 0)
    parts.push(
      `${secrets.count} possible secret${secrets.count === 1 ? '' : 's'}: ${secrets.findings.map((f) => `${f.path}:${f.line} ${f.rule}`).join(', ')}`,
    );
  const compression = preview.compression;
  if (compression)
    parts.push(
      `${compression.files} code file${compression.files === 1 ? '' : 's'} transformed: ~${compression.tokens_before} -> ~${compression.tokens_after} tokens (estimate)` +
        (compression.not_compressed.length > 0 ? `, ${compression.not_compressed.length} kept as they are` : ''),
    );
  return `${parts.join('\n')}\n`;
}
