import { describe, expect, it } from 'vitest';
import type { InspectResult } from '@reposcan/client';
import { renderInspectTable } from '../src/inspect-table.js';

function preview(rows: number): InspectResult {
  const files = Array.from({ length: rows }, (_, i) => ({
    path: `src/f${i}.ts`,
    subcategory: 'code' as const,
    size_bytes: i,
    tokens_estimate: i * 2,
    url: `file:///src/f${i}.ts`,
  }));
  return {
    repository: { name: 'big', branch: null, commit: null, tree_summary: '' },
    summary: {
      total_files: rows,
      total_size: 0,
      estimated_tokens: 0,
      file_type_breakdown: {},
      tokens_by_type: {},
      files_with_replacements: 0,
      formatted: { total_size: '0 B', estimated_tokens: '0' },
    },
    files,
    skipped_count: 0,
  };
}

describe('renderInspectTable', () => {
  it('prints a preview of more rows than arguments fit on the stack (a column width spread into Math.max overflowed it)', () => {
    const rows = 150_000;
    const lines = renderInspectTable(preview(rows), false).trimEnd().split('\n');
    expect(lines).toHaveLength(rows + 3);
    // Every column as wide as its widest cell: the longest path is src/f149999.ts.
    expect(lines[0]).toBe(`${'PATH'.padEnd('src/f149999.ts'.length)}  TYPE  ${'BYTES'.padStart(6)}  TOKENS`);
    expect(lines[1]).toBe(`${'src/f0.ts'.padEnd('src/f149999.ts'.length)}  code  ${'0'.padStart(6)}       0`);
    expect(lines[rows]).toBe('src/f149999.ts  code  149999  299998');
  });
});
