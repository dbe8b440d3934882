// Pieces of a text in the form a part shows it: the mapping of offsets, and exact counts of any
// piece from one count of the whole.
import { Buffer } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { CommaLines, EscapedText, rangeMarks, ShownText } from '../../src/artifacts/part-tally.js';
import { createTokenCounter } from '../../src/tokens/index.js';

const counter = createTokenCounter('o200k_base');
const count = (bytes: Uint8Array): number => counter.countUtf8(bytes);
const text = (bytes: Uint8Array): string => Buffer.from(bytes).toString('utf8');

describe('CommaLines', () => {
  it('puts a comma after every line break and maps each offset past the commas before it', () => {
    const lines = new CommaLines(Buffer.from('{"a":1}\n{"b":2}\n{"c":3}'));
    expect(text(lines.bytes)).toBe('{"a":1}\n,{"b":2}\n,{"c":3}');
    expect([0, 7, 8, 16, 23].map((raw) => lines.offset(raw))).toEqual([0, 7, 9, 18, 25]);
    expect(text(new CommaLines(Buffer.from('')).bytes)).toBe('');
  });
});

describe('ShownText', () => {
  const source = Buffer.from(
    Array.from({ length: 400 }, (_, i) => `line ${i}\t"quoted" \\ ${'é'.repeat(i % 7)}\n`).join(''),
  );

  it('gives every piece the bytes and exact count of its shown form, once prepared', async () => {
    const shown = new ShownText(source, (t) => new EscapedText(t));
    const escaped = new EscapedText(source).bytes;
    expect(shown.piece(0, source.length)).toEqual({ bytes: escaped, tokens: undefined });
    await shown.prepare(count, (bytes) => rangeMarks(bytes, count));
    // Line starts, and a place inside a line (ASCII there), so every end is a character boundary.
    const lineStart = (at: number): number => source.indexOf('\n', at) + 1;
    const ends = [0, lineStart(0) + 2, lineStart(4096), lineStart(5000) + 3, lineStart(9000), source.length];
    for (const from of ends)
      for (const to of ends.filter((e) => e >= from)) {
        const piece = shown.piece(from, to);
        const expected = JSON.stringify(text(source.subarray(from, to))).slice(1, -1);
        expect(text(piece.bytes)).toBe(expected);
        // Known wherever marks (about 2 kB apart) lie inside; else left to be counted whole.
        if (to - from > 3 * 2048) expect(piece.tokens).toBeDefined();
        if (piece.tokens !== undefined) expect(piece.tokens).toBe(count(piece.bytes));
      }
  });

  it('trims the end of a piece and keeps a known whole count for the whole text only', async () => {
    const rows = Buffer.from('{"x":1}\n{"y":2}\n');
    const shown = new ShownText(rows, (t) => new CommaLines(t), 99);
    await shown.prepare(count, (bytes) => rangeMarks(bytes, count));
    expect(shown.piece(0, rows.length).tokens).toBe(99);
    const trimmed = shown.piece(0, rows.length, 2);
    expect(text(trimmed.bytes)).toBe('{"x":1}\n,{"y":2}');
    expect(trimmed.tokens).toBeUndefined();
  });
});
