import { Buffer } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { jsonStringLiteral } from '../../src/render/json-string.js';

const literal = (text: string, sliceBytes?: number): string => Buffer.concat([...jsonStringLiteral(Buffer.from(text, 'utf8'), sliceBytes)]).toString('utf8');

describe('jsonStringLiteral', () => {
  const tricky = 'quote " backslash \\ tab \t nul \u0000 bs \b ff \f esc \u001b del \u007f line\u2028sep é日😀\uFEFF\r\n' + '"\\'.repeat(20);

  it('is the UTF-8 of JSON.stringify of the text, in one piece for small content', () => {
    const pieces = [...jsonStringLiteral(Buffer.from(tricky))];
    expect(pieces).toHaveLength(1);
    expect(Buffer.from(pieces[0] as Uint8Array).toString('utf8')).toBe(JSON.stringify(tricky));
  });

  it('escapes every byte below 0x20 as JSON.stringify does', () => {
    const controls = Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)).join('');
    expect(literal(controls)).toBe(JSON.stringify(controls));
    expect(JSON.parse(literal(controls))).toBe(controls);
  });

  it.each([1, 2, 3, 5, 16, 33])('is JSON.stringify of the text when sliced every %i bytes, inside multi-byte characters too', (size) => {
    for (let cut = 0; cut < 12; cut++) {
      const text = 'x'.repeat(cut) + tricky.repeat(3);
      expect(literal(text, size)).toBe(JSON.stringify(text));
    }
  });

  it('never yields a piece much larger than its slice', () => {
    const pieces = [...jsonStringLiteral(Buffer.from('€"'.repeat(100_000)), 4096)];
    expect(Buffer.concat(pieces).toString('utf8')).toBe(JSON.stringify('€"'.repeat(100_000)));
    // An escape doubles a byte at most here ('"' → '\"'); six times for a control byte.
    expect(Math.max(...pieces.map((p) => p.byteLength))).toBeLessThanOrEqual(2 * 4096);
  });
});
