import { Buffer } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { jsonStringLiteral } from '../../src/render/json-string.js';

const literal = (text: string, sliceBytes?: number): string => [...jsonStringLiteral(Buffer.from(text, 'utf8'), sliceBytes)].join('');

describe('jsonStringLiteral', () => {
  const tricky = 'quote " backslash \\ tab \t nul \u0000 esc \u001b del \u007f line\u2028sep é日😀\r\n' + '"\\'.repeat(20);

  it('is JSON.stringify of the text, in one piece for small content', () => {
    expect([...jsonStringLiteral(Buffer.from(tricky))]).toEqual([JSON.stringify(tricky)]);
  });

  it.each([4, 5, 6, 7, 16, 33])('is JSON.stringify of the text when sliced every %i bytes, multi-byte characters included', (size) => {
    for (let cut = 0; cut < 12; cut++) {
      const text = 'x'.repeat(cut) + tricky.repeat(3);
      expect(literal(text, size)).toBe(JSON.stringify(text));
    }
  });

  it('never yields a piece much larger than its slice', () => {
    const pieces = [...jsonStringLiteral(Buffer.from('€'.repeat(100_000)), 4096)];
    expect(pieces.join('')).toBe(JSON.stringify('€'.repeat(100_000)));
    expect(Math.max(...pieces.map((p) => p.length))).toBeLessThanOrEqual(4096);
  });
});
