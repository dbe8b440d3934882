// The compiled counter (assembly/bpe-count.ts) against the JavaScript one and tiktoken: the
// pre-tokenizer it follows code point by code point, the caches, and every way it hands work back
// to JavaScript (characters beyond the BMP, bytes that are not UTF-8, pieces too long to merge, a
// full exception list, inputs larger than its input area).
import { Buffer } from 'node:buffer';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createBpeCount, createBpeCounter, loadBpeTables } from '../../src/tokens/bpe-engine.js';
import { wasmCounter } from '../../src/tokens/bpe-wasm.js';
import { GROUPS, sampleGroup } from './corpus.js';
import { mulberry32 } from './seeded-random.js';
import { tiktokenCount } from './tiktoken-reference.js';

// Every class the two patterns tell apart, in and beyond ASCII, and the characters whose class
// decides a backtracking choice: marks (in both o200k letter classes but not \p{L}), titlecase and
// modifier letters, non-ASCII digits, Unicode spaces, and characters beyond the BMP.
const ALPHABET = [
  ...'aeszAESZ09 \t\n\r\v\f/\\\'".,;:-_=+*#<>()[]{}!?`~@$%^&|',
  '\u0000',
  '\u001c',
  '\u007f',
  "'s",
  "'S",
  "'re",
  "'VE",
  "'ll",
  "'d",
  "'x",
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
  'é',
  'É',
  'ß',
  'ſ',
  '\u212a',
  'ǅ',
  'ʰ',
  'ー',
  '日',
  'ا',
  '\u0301',
  '\u0903',
  '\u20dd',
  '²',
  '٣',
  '\u2160',
  '½',
  '\u00a0',
  '\u0085',
  '\u1680',
  '\u2000',
  '\u2028',
  '\u3000',
  '\ufeff',
  '→',
  '€',
  '\u00ad',
  '😀',
  '𝐀',
  '𝑎',
  '𠀀',
  '\u{1f3fd}',
  '\u{e0041}',
];

describe.each(['o200k_base', 'cl100k_base'] as const)('wasmCounter (%s)', (encoding) => {
  const tables = loadBpeTables(encoding);
  const compiled = wasmCounter(tables);
  const js = createBpeCounter(tables);
  const reference = tiktokenCount(encoding);
  const fast = (bytes: Uint8Array): number => (compiled as NonNullable<typeof compiled>).countUtf8(bytes);

  it('runs on this Node, once per thread and tables', () => {
    expect(compiled).not.toBeNull();
    expect(wasmCounter(tables)).toBe(compiled);
  });

  it('counts a real corpus like the JavaScript counter and tiktoken', () => {
    const files = [GROUPS.ts, GROUPS.js, GROUPS.md, GROUPS.json, GROUPS.map].flatMap((group) =>
      sampleGroup(group, 400_000),
    );
    const mismatches = files
      .map((file) => ({ path: file.path, bytes: Buffer.from(file.text, 'utf8') }))
      .filter((file) => fast(file.bytes) !== js.countUtf8(file.bytes))
      .map((file) => file.path);
    expect(mismatches).toEqual([]);
    // tiktoken is slow on the long pieces of maps and JSON: a spread of the rest.
    const some = files.filter((file, i) => /\.(?:[cm]?[jt]s|md)$/.test(file.path) && i % 8 === 0);
    expect(some.length).toBeGreaterThan(10);
    for (const file of some) expect(fast(Buffer.from(file.text, 'utf8')), file.path).toBe(reference(file.text));
  });

  it('follows the pattern on random text of every class, 30 000 strings', () => {
    const random = mulberry32(11 + encoding.length);
    const mismatches: string[] = [];
    for (let n = 0; n < 30_000; n++) {
      let text = '';
      for (let k = 1 + Math.floor(random() * 40); k > 0; k--) text += ALPHABET[Math.floor(random() * ALPHABET.length)];
      const bytes = Buffer.from(text, 'utf8');
      if (fast(bytes) !== js.count(text)) mismatches.push(text);
      if (n % 20 === 0) expect(fast(bytes), JSON.stringify(text)).toBe(reference(text));
    }
    expect(mismatches.slice(0, 10)).toEqual([]);
  });

  it('hands bytes that are not UTF-8 to the pattern, as the JavaScript counter does', () => {
    const random = mulberry32(5);
    for (let n = 0; n < 3000; n++) {
      const bytes = Buffer.alloc(1 + Math.floor(random() * 30));
      for (let k = 0; k < bytes.length; k++)
        bytes[k] = random() < 0.7 ? Math.floor(random() * 128) : 0x80 + Math.floor(random() * 128);
      expect(fast(bytes), bytes.toString('hex')).toBe(js.countUtf8(bytes));
    }
    // Overlong forms, surrogates, a sequence cut by the end.
    for (const hex of ['c0af', 'e080af', 'eda080', 'f08282ac', 'e282', '41e2', 'f4908080']) {
      const bytes = Buffer.from(`61${hex}20626364`, 'hex');
      expect(fast(bytes), hex).toBe(js.countUtf8(bytes));
    }
  });

  it('counts pieces longer than it merges, and runs of one class across its input area', () => {
    const texts = [
      'a'.repeat(10_000),
      ` ${'Ab'.repeat(3000)} x`,
      ' '.repeat(5000) + 'x',
      '\t \t'.repeat(2000) + '\n',
      '='.repeat(9000) + '\n\n/',
      '9'.repeat(10_001),
      'é'.repeat(6000),
      `${'x'.repeat(5000)}é${'y'.repeat(10)}`,
    ];
    for (const text of texts) expect(fast(Buffer.from(text, 'utf8')), text.slice(0, 12)).toBe(js.count(text));
    // Past its 256 kB input area: cut where pieces end, and one piece of 1.5 MB that has no such point.
    const big = `${'const value = items.map((x) => x * 2); // ñ 😀\n'.repeat(60_000)}`;
    expect(fast(Buffer.from(big, 'utf8'))).toBe(js.countUtf8(Buffer.from(big, 'utf8')));
    const onePiece = 'q'.repeat(1_500_000);
    expect(fast(Buffer.from(onePiece, 'utf8'))).toBe(js.countUtf8(Buffer.from(onePiece, 'utf8')));
    // Others with no such point that are not one ASCII byte or letters over and over: through the
    // pattern, each piece merged in place; and bytes that are not UTF-8.
    const uncut = ['é'.repeat(200_000), 'Ab'.repeat(200_000), `${'ab'.repeat(150_000)}😀x`];
    for (const text of uncut) expect(fast(Buffer.from(text, 'utf8')), text.slice(0, 4)).toBe(js.count(text));
    const broken = Buffer.concat([Buffer.alloc(300_000, 'z'), Buffer.from([0xff]), Buffer.alloc(10, 'z')]);
    expect(fast(broken)).toBe(js.countUtf8(broken));
  });

  // Up to 256 bytes a linear scan merges; up to 4 kB passes and a heap; longer pieces JavaScript.
  it('merges runs on both sides of its two limits like tiktoken and the linear scan', () => {
    const scanOnly = createBpeCount(tables, { smallPieceBytes: 1 << 20, windowed: false });
    for (const bytes of [256, 257, 4096, 4097]) {
      // One piece of `bytes` bytes each (the spaces before ` x`).
      const texts = [
        'x'.repeat(bytes),
        '.'.repeat(bytes),
        `${' '.repeat(bytes + 1)}x`,
        `${'x'.repeat(bytes % 2)}${'é'.repeat(bytes / 2)}`,
        `${'x'.repeat(bytes % 3)}${'日'.repeat(bytes / 3)}`,
        `${'a'.repeat(bytes % 2)}${'ab'.repeat(bytes / 2)}`,
      ];
      for (const text of texts) {
        const expected = bytes < 1000 ? reference(text) : scanOnly(text);
        expect(fast(Buffer.from(text, 'utf8')), `${text.slice(0, 3)}… (${bytes})`).toBe(expected);
      }
    }
  });

  it('resumes when one input lists more exceptions than it holds', () => {
    // Every emoji is a stretch for the pattern: 9 000 of them in one input.
    const text = 'ok 😀 go '.repeat(9000);
    expect(fast(Buffer.from(text, 'utf8'))).toBe(js.count(text));
    expect(fast(Buffer.from(text, 'utf8'))).toBe(reference(text));
  });

  it('keeps counts right through its caches filling and emptying', () => {
    const random = mulberry32(3);
    const letters = 'bcdfghjklmnpqrstvwxz';
    for (let text = 0; text < 150; text++) {
      let joined = '';
      for (let w = 0; w < 1000; w++) {
        // Short made-up words and long ones (9-30 letters: the long-piece cache).
        let word = ' ';
        for (let k = (w % 2 === 0 ? 3 : 9) + Math.floor(random() * (w % 2 === 0 ? 5 : 22)); k > 0; k--)
          word += letters[Math.floor(random() * letters.length)];
        joined += word;
      }
      expect(fast(Buffer.from(joined, 'utf8'))).toBe(js.count(joined));
    }
  });
});

it('is not used where Node has no WebAssembly (--jitless), and counting still works', () => {
  // The TypeScript sources load through tsx, as the token threads' development entry loads them.
  const modules = ['bpe-engine.js', 'bpe-wasm.ts'].map((name) =>
    fileURLToPath(new URL(`../../src/tokens/${name}`, import.meta.url)),
  );
  const script = `const e = await import(${JSON.stringify(modules[0])}); const w = await import(${JSON.stringify(modules[1])});
    const t = e.loadBpeTables('o200k_base');
    console.log(JSON.stringify([t.memory === null, w.wasmCounter(t) === null, e.createBpeCounter(t).countUtf8(Buffer.from("Hello, wörld! 😀"))]));`;
  const out = execFileSync(
    process.execPath,
    ['--jitless', '--import', 'tsx', '--conditions=source', '--input-type=module', '-e', script],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] },
  );
  expect(JSON.parse(out)).toEqual([true, true, tiktokenCount('o200k_base')('Hello, wörld! 😀')]);
});
