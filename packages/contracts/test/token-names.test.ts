import { describe, expect, it } from 'vitest';
import { SummaryTotals, TextFileEntry } from '../src/scan-records.js';

// Scans finished before `tokens` existed left state.json and summary.json on the volume with the
// exact counts under their first names only; they must still read, with `tokens` filled in (and
// `files_with_replacements`, which did not exist then either, read as 0).
describe('records written before `tokens` existed', () => {
  const oldTotals = {
    total_files: 2,
    total_size: 30,
    estimated_tokens: 12,
    file_type_breakdown: { code: 2 },
    tokens_by_type: { code: 12 },
    formatted: { total_size: '30 B', estimated_tokens: '12' },
  };

  it('read with `tokens` equal to the count under its first name', () => {
    expect(SummaryTotals.parse(oldTotals)).toEqual({
      ...oldTotals,
      files_with_replacements: 0,
      tokens: 12,
      formatted: { ...oldTotals.formatted, tokens: '12' },
    });
    const file = { path: 'a.ts', subcategory: 'code', size_bytes: 15, tokens_estimate: 6, url: '' };
    expect(TextFileEntry.parse(file)).toEqual({ ...file, tokens: 6 });
  });

  it('new records keep what they say; a record with neither name is refused', () => {
    const totals = {
      ...oldTotals,
      tokens: 12,
      files_with_replacements: 1,
      formatted: { ...oldTotals.formatted, tokens: '12' },
    };
    expect(SummaryTotals.parse(totals)).toEqual(totals);
    expect(SummaryTotals.safeParse({ ...oldTotals, estimated_tokens: undefined }).success).toBe(false);
    expect(TextFileEntry.safeParse({ path: 'a.ts', subcategory: 'code', size_bytes: 15, url: '' }).success).toBe(false);
  });
});
