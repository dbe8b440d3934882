import { Buffer } from 'node:buffer';
import cl100kRanks from 'js-tiktoken/ranks/cl100k_base';
import o200kRanks from 'js-tiktoken/ranks/o200k_base';
import { describe, expect, it } from 'vitest';
import { countUtf8, createBpeCount, createBpeCounter, loadBpeTables, splitUtf8 } from '../../src/tokens/bpe-engine.js';
import { wasmCounter } from '../../src/tokens/bpe-wasm.js';
import { createTokenCounter } from '../../src/tokens/index.js';
import type { TokenEncodingName } from '../../src/types.js';
import { GROUPS, sampleGroup } from './corpus.js';
import { mulberry32 } from './seeded-random.js';
import { tiktokenCount } from './tiktoken-reference.js';

const RANKS = { o200k_base: o200kRanks, cl100k_base: cl100kRanks } as const;

/** tiktoken is quadratic per pre-tokenizer piece and slow on long ones, so the corpus check keeps to
 * files without a very long piece; long pieces are tested on their own below. */
const LONGEST_REFERENCE_PIECE = 1000;

function longestPiece(encoding: TokenEncodingName, text: string): number {
  let longest = 0;
  for (const [piece] of text.matchAll(new RegExp(RANKS[encoding].pat_str, 'gu')))
    longest = Math.max(longest, piece.length);
  return longest;
}

const EDGE_CASES: Record<string, string> = {
  'empty string': '',
  'special tokens':
    '<|endoftext|><|im_start|>user\nhi<|im_end|><|fim_prefix|><|fim_middle|><|fim_suffix|><|endofprompt|>',
  'special token inside code': 'const eot = "<|endoftext|>"; // <|endoftext|>\n',
  'lone high surrogate': 'a\uD800b',
  'lone low surrogate': 'a\uDC00b',
  'high surrogate at the end': 'end\uD83D',
  'reversed surrogate pair': '\uDE00\uD83D x',
  emoji: 'Hi 👋🏽 👨‍👩‍👧‍👦 🇫🇷 ❤️ 😀😀😀',
  CJK: '日本語のテキストと中文文本，还有한국어 텍스트。',
  'mixed scripts': 'Ελληνικά, русский, العربية, हिन्दी, ไทย, עברית',
  'combining marks': 'e\u0301 a\u0300\u0301\u0302 Z\u0351\u0352\u0353',
  CRLF: 'line one\r\nline two\r\n\r\n  indented\r\n',
  'lone CR': 'a\rb\r\rc',
  'whitespace mix': ' \t \n\n \u00A0\u2028\u2029\u3000 x  ',
  'BOM and NEL': '\uFEFFstart \uFEFF " \uFEFF" a\u0085b',
  'a UTF-8 file with a byte order mark': '\uFEFF#coding: utf8\n',
  'NEL after a space': ' \u0085x',
  "a long s after an apostrophe (tiktoken's contractions ignore case)": "it'\u017F l'\u017Fx DON'\u017F '\u017Fs",
  'letters and digits newer than Unicode 16': "\u{323B0}'s \u{10940}'s \u{11DE0}123 \u0295's",
  'control characters': '\u0000\u0001\u0007\u001b[0m\u007f',
  contractions: "I'm you're we've they'll she'd it's DON'T O'Neil",
  numbers: '1 12 123 1234 12345 3.14159 1e10 0xFF 1_000_000',
  'prototype keys': 'toString valueOf __proto__ hasOwnProperty constructor isPrototypeOf propertyIsEnumerable',
};

describe.each(['o200k_base', 'cl100k_base'] as const)('createTokenCounter(%s)', (encoding) => {
  const reference = tiktokenCount(encoding);
  const counter = createTokenCounter(encoding);

  it('counts like tiktoken on a real corpus (node_modules: .ts .d.ts .js .md .json .map)', () => {
    const files = [GROUPS.ts, GROUPS.dts, GROUPS.js, GROUPS.md, GROUPS.json, GROUPS.map].flatMap((group) =>
      sampleGroup(group, 800_000, { accept: (text) => longestPiece(encoding, text) <= LONGEST_REFERENCE_PIECE }),
    );
    expect(files.reduce((sum, file) => sum + file.text.length, 0)).toBeGreaterThan(3_000_000);
    const mismatches = files
      .map((file) => ({
        path: file.path,
        expected: reference(file.text),
        actual: counter.count(file.text),
        utf8: counter.countUtf8(Buffer.from(file.text, 'utf8')),
      }))
      .filter((result) => result.actual !== result.expected || result.utf8 !== result.expected);
    expect(mismatches).toEqual([]);
  });

  it.each(Object.entries(EDGE_CASES))('counts like tiktoken: %s', (_name, text) => {
    expect(counter.count(text)).toBe(reference(text));
    // The bytes a file would hold (a lone surrogate is written as U+FFFD).
    const bytes = Buffer.from(text, 'utf8');
    expect(counter.countUtf8(bytes)).toBe(reference(bytes.toString('utf8')));
  });

  it('counts random mixes of every character class like tiktoken', () => {
    const random = mulberry32(encoding.length);
    const alphabet = [
      ...'abcXYZ019 _-.,;:(){}[]<>/\\\'"\n\r\t',
      'é',
      'ß',
      'ж',
      '日',
      '本',
      'ー',
      '한',
      '😀',
      '🏽',
      '\u200d',
      '\u0301',
      '\uD800',
      '\uDC00',
      '\u00A0',
      '\uFEFF',
      '<|endoftext|>',
      "'s",
      "'LL",
    ];
    for (let n = 0; n < 300; n++) {
      let text = '';
      const length = 1 + Math.floor(random() * 120);
      for (let i = 0; i < length; i++) text += alphabet[Math.floor(random() * alphabet.length)];
      expect(counter.count(text), JSON.stringify(text)).toBe(reference(text));
    }
  });

  it('counts long pre-tokenizer pieces like tiktoken (the tree)', () => {
    const pieces = [
      ' '.repeat(999) + 'x',
      '\n'.repeat(700),
      'a'.repeat(1000),
      '='.repeat(1000),
      '😀😁😂🤣'.repeat(60),
      '日本語テキスト'.repeat(40),
      'ab'.repeat(400),
    ];
    for (const text of pieces) expect(counter.count(text)).toBe(reference(text));
  });

  it('agrees between windows, the tree alone and the linear scan on pieces too long for tiktoken', () => {
    const tables = loadBpeTables(encoding);
    const windows = createBpeCount(tables, { smallPieceBytes: 1 });
    const treeOnly = createBpeCount(tables, { smallPieceBytes: 1, windowed: false });
    const scanOnly = createBpeCount(tables, { smallPieceBytes: 16_384, windowed: false });
    const pieces = [
      '😀😁😂🤣😃😄😅😆😉😊😋😎'.repeat(250),
      '日本語のテキスト'.repeat(600),
      ' '.repeat(15_000),
      'Zz'.repeat(6000),
      '-='.repeat(6000),
    ];
    for (const text of pieces) {
      expect(windows(text)).toBe(scanOnly(text));
      expect(treeOnly(text)).toBe(scanOnly(text));
    }
  });

  it('counts a 1 MB single line like tiktoken', () => {
    let line = '';
    for (let i = 0; line.length < 1_000_000; i++) line += `var a${i}=function(b,c){return b+c*${i}};`;
    expect(line).not.toContain('\n');
    expect(counter.count(line)).toBe(reference(line));
  });

  it('never throws, and counts nothing as zero', () => {
    expect(counter.count('')).toBe(0);
    for (const text of [
      '\uD800',
      '\uDFFF\uD800',
      '\u0000',
      '<|endoftext|>'.repeat(1000),
      String.fromCharCode(...Array.from({ length: 0x800 }, (_, i) => i)),
    ]) {
      expect(() => counter.count(text)).not.toThrow();
    }
  });
});

// The compiled counter splits text into pieces on the bytes, by code that mirrors the pattern; a
// stretch beyond the Basic Multilingual Plane or not UTF-8 goes through the pattern from the start
// of its piece to the next point where both patterns always split. Every class the pattern tells
// apart, next to every other, many times over, against the JavaScript counter (the pattern itself).
describe.each(['o200k_base', 'cl100k_base'] as const)(
  'wasmCounter(%s).countUtf8: pieces found on the bytes',
  (encoding) => {
    const tables = loadBpeTables(encoding);
    const { count } = createBpeCounter(tables);
    const compiled = wasmCounter(tables);
    const fast = (bytes: Uint8Array): number => (compiled as NonNullable<typeof compiled>).countUtf8(bytes);
    const reference = tiktokenCount(encoding);

    // Without it every test below would compare the pattern with itself: js-tiktoken's pattern must
    // still be the one the compiled scanner mirrors.
    it("recognises js-tiktoken's pattern, so text is counted on the bytes", () => {
      expect(compiled).not.toBeNull();
    });
    const decoded = (bytes: Uint8Array): number => count(Buffer.from(bytes).toString('utf8'));
    const ALPHABET = [
      ...'aeszAESZ09 \t\n\r\v\f/\\\'".,;:-_=+*#<>()[]{}!?`~@$%^&|',
      '\u0000',
      '\u0001',
      '\u001b',
      '\u001c',
      '\u007f',
      "'s",
      "'S",
      "'t",
      "'re",
      "'rE",
      "'ve",
      "'VE",
      "'m",
      "'ll",
      "'Ll",
      "'d",
      "'D",
      "'x",
      "'r",
      "'l",
      'ABC',
      'abc',
      'Abc',
      'aBC',
      '123',
      '4567',
      '  ',
      '\n\n',
      '\r\n',
      ' //',
      '\n/',
      // Beyond ASCII: letters of each case, marks, digits, spaces, symbols, and what folds to ASCII.
      'é',
      'É',
      'ß',
      'ſ',
      '\u212a',
      'ǅ',
      'ʰ',
      '日',
      '\u0301',
      '²',
      '٣',
      '\u00a0',
      '\u0085',
      '\u1680',
      '\u2028',
      '\u3000',
      '\ufeff',
      '→',
      '😀',
      '\uD800',
    ];
    const random = mulberry32(7 + encoding.length);
    const randomText = (length: number): string => {
      let text = '';
      for (let i = 0; i < length; i++) text += ALPHABET[Math.floor(random() * ALPHABET.length)];
      return text;
    };

    it('equals the pattern on random text of every class, 20 000 strings', () => {
      const mismatches: string[] = [];
      for (let n = 0; n < 20_000; n++) {
        const bytes = Buffer.from(randomText(1 + Math.floor(random() * 40)), 'utf8');
        if (fast(bytes) !== decoded(bytes)) mismatches.push(bytes.toString('utf8'));
      }
      expect(mismatches.slice(0, 10)).toEqual([]);
    });

    it('equals tiktoken on random text of every class', () => {
      for (let n = 0; n < 1500; n++) {
        const bytes = Buffer.from(randomText(1 + Math.floor(random() * 60)), 'utf8');
        const text = bytes.toString('utf8');
        expect(fast(bytes), JSON.stringify(text)).toBe(reference(text));
      }
    });

    // Short pieces outside the vocabulary are merged once and kept, in a cache that is emptied when
    // full and behind a small direct-mapped one that is overwritten all the time: 120 000 made-up
    // words go through both many times over. The reference is a counter of its own, counting strings.
    it('counts more made-up short words than its caches hold, like the pattern and tiktoken', () => {
      const letters = 'bcdfghjklmnpqrstvwxz';
      const reference2 = createBpeCount(tables);
      let checked = 0;
      for (let text = 0; text < 120; text++) {
        const words: string[] = [];
        for (let w = 0; w < 1000; w++) {
          let word = ' ';
          for (let k = 3 + Math.floor(random() * 5); k > 0; k--) word += letters[Math.floor(random() * letters.length)];
          words.push(word);
        }
        const joined = words.join('');
        expect(fast(Buffer.from(joined, 'utf8'))).toBe(reference2(joined));
        if (text % 40 === 0) {
          expect(fast(Buffer.from(joined, 'utf8'))).toBe(reference(joined));
          checked++;
        }
      }
      expect(checked).toBe(3);
    });

    it('equals the pattern on long runs of one class and on a piece longer than the scratch buffer', () => {
      const texts = [
        ' '.repeat(5000) + 'x',
        ' '.repeat(5000),
        '\t \t'.repeat(900) + '\n',
        '\n'.repeat(3000) + ' x',
        'a'.repeat(100_000),
        'Ab'.repeat(40_000),
        '='.repeat(100_000) + '\n\n/',
        '9'.repeat(10_001),
        `${'x'.repeat(70_000)}é${'y'.repeat(10)}`,
        ' \u00a0'.repeat(500),
      ];
      for (const text of texts) {
        const bytes = Buffer.from(text, 'utf8');
        expect(fast(bytes), text.slice(0, 20)).toBe(decoded(bytes));
      }
    });

    it('counts mostly non-ASCII text, and parts of a file that add up to the whole', () => {
      const text = `${EDGE_CASES.CJK} ${EDGE_CASES['mixed scripts']}\n${EDGE_CASES.emoji}\n`.repeat(200);
      const bytes = Buffer.from(text, 'utf8');
      expect(fast(bytes)).toBe(reference(text));
      const parts = splitUtf8(bytes, 1000);
      expect(parts.length).toBeGreaterThan(10);
      expect(parts.reduce((sum, part) => sum + fast(part), 0)).toBe(fast(bytes));
    });
  },
);

// Files are counted from their UTF-8 bytes a slice at a time; the slices must add up to the count of
// the whole decoded text. Tiny slices make nearly every split point in the text an actual split.
describe.each(['o200k_base', 'cl100k_base'] as const)('countUtf8 (%s): slices add up to the whole', (encoding) => {
  const count = createBpeCount(loadBpeTables(encoding));
  const utf8 = (text: string): Uint8Array => Buffer.from(text, 'utf8');
  /** What the file holds: its bytes decoded (a lone surrogate was written as U+FFFD). */
  const whole = (bytes: Uint8Array): number => count(Buffer.from(bytes).toString('utf8'));

  it.each([2, 7, 64, 1000, 65_536])('on the real corpus, slices of %i bytes', (sliceBytes) => {
    const files = [GROUPS.ts, GROUPS.js, GROUPS.md, GROUPS.json, GROUPS.map].flatMap((group) =>
      sampleGroup(group, 300_000),
    );
    const mismatches = files
      .map((file) => utf8(file.text))
      .filter((bytes) => countUtf8(count, bytes, sliceBytes) !== whole(bytes));
    expect(mismatches).toEqual([]);
  });

  it('on random text made of the characters around split points', () => {
    const random = mulberry32(41 + encoding.length);
    const alphabet = [
      ..."aZ \n\r\t/',.;-_:`!?09",
      "'s",
      "'re",
      "'LL",
      ' x',
      '\n/',
      '\nx',
      'é',
      '日',
      '😀',
      '\u00A0',
      '\u0301',
      '\u2028',
      '\uD800',
    ];
    for (let n = 0; n < 3000; n++) {
      let text = '';
      const length = 1 + Math.floor(random() * 80);
      for (let i = 0; i < length; i++) text += alphabet[Math.floor(random() * alphabet.length)];
      const bytes = utf8(text);
      for (const sliceBytes of [2, 3, 5, 11])
        expect(countUtf8(count, bytes, sliceBytes), `${JSON.stringify(text)} / ${sliceBytes}`).toBe(whole(bytes));
    }
  });

  it('decodes one slice at a time', () => {
    const seen: number[] = [];
    const spy = (text: string): number => {
      seen.push(text.length);
      return count(text);
    };
    const bytes = utf8('const value = compute(first, second);\n'.repeat(20_000));
    expect(countUtf8(spy, bytes, 4096)).toBe(whole(bytes));
    expect(Math.max(...seen)).toBeLessThanOrEqual(4096 + 64);
    expect(seen.length).toBeGreaterThan(bytes.length / 4096 - 1);
  });
});
