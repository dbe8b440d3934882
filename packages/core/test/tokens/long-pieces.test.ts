// Long pre-tokenizer pieces: a run of one character, or a word of random letters, is one piece however
// long it is. Pieces over 64 bytes merge in a tournament tree (the compiled counter first in passes
// that merge a whole rank at once, and its linear scan sweeps a run's rank); shorter ones in
// tiktoken's loop; longer than 8 kB, in overlapping windows of 8 kB glued at a token they share
// (countWindows). tiktoken is the reference where it is fast enough (it is quadratic: 10 kB of
// random letters take it seconds); beyond that, the two ways the JavaScript counter merges without
// windows: tiktoken's own loop, and the tree alone.
import { Buffer } from 'node:buffer';
import { Tiktoken } from 'js-tiktoken/lite';
import o200kRanks from 'js-tiktoken/ranks/o200k_base';
import { describe, expect, it } from 'vitest';
import {
  buildBpeTables,
  createBpeCount,
  createBpeCounter,
  loadBpeTables,
  LONGEST_TOKEN_BYTES,
} from '../../src/tokens/bpe-engine.js';
import { wasmCounter } from '../../src/tokens/bpe-wasm.js';
import { createTokenCounter } from '../../src/tokens/index.js';
import { mulberry32 } from './seeded-random.js';
import { tiktokenCount } from './tiktoken-reference.js';

const MiB = 1024 * 1024;

/** `bytes` random lower-case letters, seeded, made fast enough for 10 MiB. */
function randomWord(bytes: number): string {
  const random = mulberry32(9);
  const buffer = Buffer.alloc(bytes);
  for (let i = 0; i < bytes; i++) buffer[i] = 0x61 + Math.floor(random() * 26);
  return buffer.toString('latin1');
}

/** A piece of about `bytes` UTF-8 bytes, of each kind that makes merging slow or tricky. */
function adversarial(seed: number): Array<[string, (bytes: number) => string]> {
  const random = mulberry32(seed);
  const randomOf = (chars: string, length: number): string =>
    Array.from({ length }, () => chars[Math.floor(random() * chars.length)]).join('');
  return [
    ['a run of x', (n) => 'x'.repeat(n)],
    ['a run of .', (n) => '.'.repeat(n)],
    ['a run of spaces', (n) => `${' '.repeat(n)}x`],
    ['a run of digits', (n) => '7'.repeat(n)],
    ['a run of é', (n) => 'é'.repeat(n / 2)],
    ['a run of 日', (n) => '日'.repeat(n / 3)],
    ['alternating letters', (n) => 'ox'.repeat(n / 2)],
    ['alternating symbols', (n) => '-='.repeat(n / 2)],
    ['a run with a break every 97 bytes', (n) => `${'x'.repeat(96)}y`.repeat(n / 97)],
    ['a random word', (n) => randomOf('abcdefghijklmnopqrstuvwxyz', n)],
    ['random symbols', (n) => randomOf('.,;:=-+*/!?#%&|~^', n)],
  ];
}

describe.each(['o200k_base', 'cl100k_base'] as const)('long pieces (%s)', (encoding) => {
  const tables = loadBpeTables(encoding);
  const reference = tiktokenCount(encoding);
  const counter = createTokenCounter(encoding);
  const compiled = (text: string): number => counter.countUtf8(Buffer.from(text, 'utf8'));
  const scanOnly = createBpeCount(tables, { smallPieceBytes: 1 << 20, windowed: false });
  const treeOnly = createBpeCount(tables, { windowed: false });

  it('has no token longer than LONGEST_TOKEN_BYTES, and one that long', async () => {
    const { bpe_ranks: ranks } = ((await import(`js-tiktoken/ranks/${encoding}`)) as { default: { bpe_ranks: string } })
      .default;
    let longest = 0;
    for (const line of ranks.split('\n'))
      for (const token of line.split(' ').slice(2)) longest = Math.max(longest, Buffer.from(token, 'base64').length);
    expect(longest).toBe(LONGEST_TOKEN_BYTES);
  });

  it.each(adversarial(1))('%s of 100 B, 300 B and 1 kB: like tiktoken', (_kind, piece) => {
    for (const bytes of [100, 300, 1000]) {
      const text = piece(bytes);
      const expected = reference(text);
      expect(counter.count(text)).toBe(expected);
      expect(compiled(text)).toBe(expected);
    }
  });

  it.each(adversarial(2))("%s of 6 kB: like tiktoken's loop", (_kind, piece) => {
    const text = piece(6000);
    expect(counter.count(text)).toBe(scanOnly(text));
    expect(compiled(text)).toBe(scanOnly(text));
  });

  it.each(adversarial(3).filter(([kind]) => kind.startsWith('a run') || kind.startsWith('alternating')))(
    '%s of 200 kB: like the tree alone',
    (_kind, piece) => {
      const text = piece(200_000);
      expect(compiled(text)).toBe(treeOnly(text));
    },
  );

  it.each(adversarial(4).filter(([kind]) => kind.startsWith('random')))(
    '%s of 50 kB: like the tree alone',
    (_kind, piece) => {
      const text = piece(50_000);
      expect(compiled(text)).toBe(treeOnly(text));
    },
  );

  it('a random word of 2.5 kB, mixed case: like tiktoken', () => {
    const random = mulberry32(5);
    for (const letters of ['abcdefghijklmnopqrstuvwxyz', 'aAbBcCdDeEfFgG']) {
      const text = Array.from({ length: 2500 }, () => letters[Math.floor(random() * letters.length)]).join('');
      const expected = reference(text);
      expect(counter.count(text)).toBe(expected);
      expect(compiled(text)).toBe(expected);
    }
  });

  // Five windows and more: the glued windows against tiktoken's loop, which never cuts a piece.
  it("a random word of 40 kB: like tiktoken's loop", () => {
    const [, piece] = adversarial(6).find(([kind]) => kind === 'a random word') as [string, (bytes: number) => string];
    const text = piece(40_000);
    expect(compiled(text)).toBe(scanOnly(text));
    expect(counter.count(text)).toBe(scanOnly(text));
  });

  it('a random word of 1 MiB: like the tree alone', () => {
    const text = randomWord(MiB);
    const expected = treeOnly(text);
    expect(compiled(text)).toBe(expected);
    expect(counter.count(text)).toBe(expected);
  });

  // A 10 MiB file (the largest a scan reads) of one run is one piece of 10 MiB: it is counted, by
  // the compiled counter from the bytes and by the pattern from the string, alike.
  it.each([
    ['a run of x', (n: number) => 'x'.repeat(n)],
    ['a run of .', (n: number) => '.'.repeat(n)],
    ['a random word', randomWord],
  ])('counts %s of 10 MiB', (_kind, piece) => {
    const text = piece(10 * MiB);
    const tokens = compiled(text);
    expect(tokens).toBeGreaterThan(0);
    // Merges were made: a run's tokens are many bytes long, random letters' about two.
    expect(tokens).toBeLessThan(text.length * 0.6);
    expect(counter.count(text)).toBe(tokens);
  });
});

// In o200k and cl100k a merge has never been seen to make a pair that ranks below the merge itself,
// but a vocabulary may hold such tokens, and then a pass must stop where tiktoken would merge that
// pair first. Made-up vocabularies of random tokens over three letters, with random ranks, have
// them everywhere. With o200k's pattern, the compiled counter runs over them too; js-tiktoken, which
// takes a vocabulary as it is, is the reference.
describe.each([1, 2, 3, 4, 5, 6, 7, 8])(
  'long pieces of made-up vocabulary %i, whose merges make pairs of lower rank',
  (seed) => {
    const random = mulberry32(seed);
    const base64 = (text: string): string => Buffer.from(text, 'latin1').toString('base64');
    const lines = [`! 0 ${Array.from({ length: 256 }, (_, byte) => base64(String.fromCharCode(byte))).join(' ')}`];
    const tokens = new Set<string>();
    while (tokens.size < 60)
      tokens.add(Array.from({ length: 2 + Math.floor(random() * 5) }, () => 'abc'[Math.floor(random() * 3)]).join(''));
    const ranks = [...tokens].map((_, i) => 256 + i);
    for (let i = ranks.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [ranks[i], ranks[j]] = [ranks[j] as number, ranks[i] as number];
    }
    [...tokens].forEach((token, i) => lines.push(`! ${ranks[i]} ${base64(token)}`));
    const vocabulary = { pat_str: o200kRanks.pat_str, special_tokens: {}, bpe_ranks: lines.join('\n') };
    const tiktoken = new Tiktoken(vocabulary);
    const tables = buildBpeTables(vocabulary.pat_str, vocabulary.bpe_ranks);
    const compiled = wasmCounter(tables);
    const ways = {
      'tree alone': createBpeCount(tables, { windowed: false }),
      'linear scan': createBpeCount(tables, { smallPieceBytes: 1 << 20, windowed: false }),
      compiled: (text: string) => (compiled as NonNullable<typeof compiled>).countUtf8(Buffer.from(text, 'latin1')),
    };

    it("merges in tiktoken's order, 60 pieces of 2 to 800 letters", () => {
      expect(compiled).not.toBeNull();
      const mismatches: string[] = [];
      for (let n = 0; n < 60; n++) {
        // Random letters, or runs of one letter with others between (the compiled counter's passes
        // go on before one stops); short pieces (tiktoken's loop; the compiled one's sweeps) and long ones (the tree).
        const letters = ['abc', 'ab', 'aaaaaaaaab'][n % 3] as string;
        const length = n % 2 === 0 ? 2 + Math.floor(random() * 255) : 257 + Math.floor(random() * 544);
        const text = Array.from({ length }, () => letters[Math.floor(random() * letters.length)]).join('');
        const expected = tiktoken.encode(text, [], []).length;
        for (const [way, count] of Object.entries(ways))
          if (count(text) !== expected) mismatches.push(`${way}: ${text.slice(0, 40)}…`);
      }
      expect(mismatches.slice(0, 10)).toEqual([]);
    });

    // Windows of 16 bytes glue a piece of a few kilobytes hundreds of times, some only with the wider
    // overlap, and some pieces share no token at all and go back to the tree: every one like the tree
    // alone (which the test above holds to tiktoken).
    it('counts in windows of 16 bytes like the tree alone, 40 pieces of 300 to 3000 letters', () => {
      const windows = createBpeCounter(tables, { windows: { windowBytes: 16 } });
      const mismatches: string[] = [];
      for (let n = 0; n < 40; n++) {
        const letters = ['abc', 'ab', 'aaaaaaaaab', 'aab'][n % 4] as string;
        const text = Array.from(
          { length: 300 + Math.floor(random() * 2700) },
          () => letters[Math.floor(random() * letters.length)],
        ).join('');
        if (windows.count(text) !== ways['tree alone'](text)) mismatches.push(text.slice(0, 40));
      }
      expect(mismatches.slice(0, 10)).toEqual([]);
    });
  },
);
