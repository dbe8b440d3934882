// Every code point, U+0000 to U+10FFFF, in a few contexts, counted by both of reposcan's counters and
// by OpenAI's tiktoken (one test file per encoding, so that the two run side by side). The contexts
// put each character where its classes decide the pieces: after a newline and before digits
// (`\p{N}{1,3}`), after a space and before a contraction (letters and marks take `'s`, punctuation
// takes the apostrophe), between a tab and a newline (`\s`). A code point alone is one piece, the
// merge of its bytes, which the contexts hold too.
//
// The contexts of many code points are counted as one text, and a block whose counts differ is
// counted again code point by code point to name them. Lone surrogates go in as JavaScript strings
// hold them: both counters and tiktoken (through TextEncoder) see U+FFFD.
import { Buffer } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { createBpeCounter, loadBpeTables } from '../../src/tokens/bpe-engine.js';
import { wasmCounter } from '../../src/tokens/bpe-wasm.js';
import type { TokenEncodingName } from '../../src/types.js';
import { tiktokenCount } from './tiktoken-reference.js';

const BLOCK = 8192;
const contexts = (x: string): string => `${x}123 ${x}'s\t${x}\n`;

const codePointName = (code: number): string => `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;

/** `U+XXXX` of the code points in [from, to) whose contexts `count` counts unlike `reference`. */
function mismatches(
  from: number,
  to: number,
  count: (text: string) => number,
  reference: (text: string) => number,
): string[] {
  const found: string[] = [];
  for (let block = from; block < to; block += BLOCK) {
    const texts: string[] = [];
    for (let c = block; c < Math.min(to, block + BLOCK); c++) texts.push(contexts(String.fromCodePoint(c)));
    const text = texts.join('');
    if (count(text) === reference(text)) continue;
    const before = found.length;
    texts.forEach((one, i) => {
      if (count(one) !== reference(one)) found.push(codePointName(block + i));
    });
    // Each code point's contexts agree, yet the block's do not: name the block.
    if (found.length === before) found.push(`the block from ${codePointName(block)}`);
  }
  return found;
}

export function sweepEveryCodePoint(encoding: TokenEncodingName): void {
  describe(`every code point against tiktoken (${encoding})`, () => {
    const tables = loadBpeTables(encoding);
    const reference = tiktokenCount(encoding);

    // In parts, each well within a test's time on a busy machine.
    const parts: Array<{ from: number; to: number; name: string }> = [];
    for (let from = 0; from < 0x110000; from += 0x30000) {
      const to = Math.min(0x110000, from + 0x30000);
      parts.push({ from, to, name: `${codePointName(from)} to ${codePointName(to - 1)}` });
    }
    it.each(parts)('the compiled counter counts like tiktoken, $name', ({ from, to }) => {
      const compiled = wasmCounter(tables);
      expect(compiled).not.toBeNull();
      const countUtf8 = compiled!.countUtf8;
      expect(mismatches(from, to, (text) => countUtf8(Buffer.from(text, 'utf8')), reference)).toEqual([]);
    });

    // The compiled counter hands every stretch beyond the Basic Multilingual Plane to the JavaScript
    // counter, so above the plane the test before counted with this one already.
    it('the JavaScript counter counts like tiktoken', () => {
      expect(mismatches(0, 0x10000, createBpeCounter(tables).count, reference)).toEqual([]);
    });
  });
}
