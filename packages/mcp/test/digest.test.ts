// Paging a scan's text within a token budget, on outputs made up here: a line longer than the
// budget, text outside the BMP, a file cut across the parts of a JSON output, and bad cursors.
import { Tiktoken } from 'js-tiktoken/lite';
import o200kRanks from 'js-tiktoken/ranks/o200k_base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LONGEST_TOKEN_BYTES } from '@reposcan/core';
import { inProcessCounting, pooledCounting, ScanDigest } from '../src/digest.js';
import type { TokenCounting } from '../src/digest.js';
import { DigestCache } from '../src/tools.js';
import { liteJson, madeSummary } from './support/made-scan.js';

const tiktoken = new Tiktoken(o200kRanks);
const tokens = (text: string): number => tiktoken.encode(text, [], []).length;

const summary = madeSummary();

async function readAll(
  page: (cursor: string | null) => Promise<{ text: string; tokens: number; next_cursor: string | null }>,
  budget: number,
): Promise<string[]> {
  const texts: string[] = [];
  let cursor: string | null = null;
  do {
    const p = await page(cursor);
    expect(p.tokens).toBe(tokens(p.text));
    expect(p.tokens).toBeLessThanOrEqual(budget);
    expect(p.text.length).toBeGreaterThan(0);
    texts.push(p.text);
    cursor = p.next_cursor;
  } while (cursor !== null);
  return texts;
}

const pool = pooledCounting(1);
afterAll(() => pool.close());

describe.each([
  ['in process', inProcessCounting],
  ['on a token thread', pool.counting],
])('ScanDigest counting %s', (_, counting) => {
  it('cuts a line longer than the budget between characters, never inside a surrogate pair', async () => {
    const line = '😀 déjà vu, 数据 '.repeat(400);
    const digest = await ScanDigest.from(summary, [liteJson({ 'one-line.txt': line })], counting);
    const pages = await readAll((c) => digest.filePage('one-line.txt', c, 200), 200);
    expect(pages.join('')).toBe(line);
    expect(pages.length).toBeGreaterThan(5);
    for (const text of pages) {
      expect(/^[\uDC00-\uDFFF]/.test(text)).toBe(false);
      expect(/[\uD800-\uDBFF]$/.test(text)).toBe(false);
    }
  });

  it('keeps files whole in a page when they fit, and the pages make the txt output', async () => {
    const files = Object.fromEntries(
      Array.from({ length: 30 }, (_, i) => [`f${i}.ts`, `export const f${i} = ${i};\n`]),
    );
    const digest = await ScanDigest.from(summary, [liteJson(files)], counting);
    const pages = await readAll((c) => digest.digestPage('txt', c, 200), 200);
    expect(pages.length).toBeGreaterThan(1);
    // Each page after the first opens on a file's header: no file is split.
    for (const text of pages.slice(1)) expect(text.startsWith(`${'='.repeat(64)}\nFILE: `)).toBe(true);
    const all = await digest.digestPage('txt', null, 500_000);
    expect(all.next_cursor).toBeNull();
    expect(pages.join('')).toBe(all.text);
  });

  it('joins a file cut across the parts of a JSON output', async () => {
    const part1 = `{\n"tree":"made\\n",\n"files":[\n${JSON.stringify({ path: 'a.ts', file_part: { part: 1, parts: 2 }, content: 'first half\n' })}\n]}\n`;
    const part2 = `{\n"files":[\n${JSON.stringify({ path: 'a.ts', file_part: { part: 2, parts: 2 }, content: 'second half\n' })}\n,${JSON.stringify({ path: 'b.ts', content: 'b\n' })}\n]}\n`;
    const digest = await ScanDigest.from(summary, [part1, part2], counting);
    expect([...digest.files.keys()]).toEqual(['a.ts', 'b.ts']);
    expect((await digest.filePage('a.ts', null, 1000)).text).toBe('first half\nsecond half\n');
  });

  it('indexes the output once, then reads about a page of it', async () => {
    // Texts and names that hold what the index looks for: only the key itself counts.
    const files = Object.fromEntries(
      Array.from({ length: 200 }, (_, i) => [
        `src/"content":"${i}.ts`,
        `export const s${i} = '{"path":"x","content":"y"},';\n${'// filler line\n'.repeat(150)}`,
      ]),
    );
    const output = Buffer.from(liteJson(files));
    const reader = () => {
      const it = {
        bytes: 0,
        read: (_: number | undefined, start: number, end: number) => {
          it.bytes += end - start;
          return Promise.resolve(output.subarray(start, end));
        },
      };
      return it;
    };
    const indexing = reader();
    const digest = await ScanDigest.open(summary, [{ part: undefined, bytes: output.length }], indexing.read, counting);
    expect(indexing.bytes).toBe(output.length);
    expect([...digest.files.keys()]).toEqual(Object.keys(files));
    // Pages read through their own caller's reader (its rights, its signal), not the indexing one's.
    const paging = reader();
    const first = await digest.digestPage('json', null, 2000, undefined, paging.read);
    await digest.digestPage('json', first.next_cursor, 2000, undefined, paging.read);
    expect(indexing.bytes).toBe(output.length);
    expect(paging.bytes).toBeGreaterThan(0);
    expect(paging.bytes).toBeLessThan(output.length / 10);
    const whole = await digest.digestPage('json', null, 500_000);
    expect(whole.next_cursor).toBeNull();
    expect(whole.text).toBe(output.toString('utf8'));
    const file = await digest.filePage('src/"content":"7.ts', null, 100_000);
    expect(file.text).toBe(files['src/"content":"7.ts']);
  });

  it('refuses a cursor it did not give, and a file the scan does not hold', async () => {
    const digest = await ScanDigest.from(summary, [liteJson({ 'a.ts': 'a\n' })], counting);
    for (const cursor of ['x', '5.0', '0.999999', '-1.0'])
      await expect(digest.digestPage('md', cursor, 1000)).rejects.toThrow(/not one this scan gave/);
    await expect(digest.filePage('b.ts', null, 1000)).rejects.toThrow(/list_scan_files/);
  });

  it('refuses a cursor in bounds that no page gave: mid-word, moved, or from another file or format', async () => {
    const long = Array.from({ length: 400 }, (_, i) => `export const value${i} = ${i};\n`).join('');
    const files = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`f${i}.ts`, long]));
    const digest = await ScanDigest.from(summary, [liteJson(files)], counting);
    const given = (await digest.filePage('f0.ts', null, 300)).next_cursor as string;
    const givenMd = (await digest.digestPage('md', null, 300)).next_cursor as string;
    expect(await digest.filePage('f0.ts', given, 300)).toMatchObject({ files: ['f0.ts'] });
    const [block, offset] = given.split('.').map(Number) as [number, number];
    const refused: Array<[string, () => Promise<unknown>]> = [
      ['0.5', () => digest.filePage('f0.ts', '0.5', 300)],
      ['2.10', () => digest.digestPage('md', '2.10', 300)],
      ['moved', () => digest.filePage('f0.ts', given.replace(`${block}.${offset}`, `${block}.${offset + 1}`), 300)],
      ['another file', () => digest.filePage('f1.ts', given, 300)],
      ['another format', () => digest.digestPage('txt', givenMd, 300)],
      ['a file for the digest', () => digest.digestPage('md', given, 300)],
    ];
    for (const [what, page] of refused)
      await expect(page(), what).rejects.toMatchObject({ code: 'INVALID_REQUEST', message: /not one this scan gave/ });
  });

  it('reads an empty file as one empty page', async () => {
    const digest = await ScanDigest.from(summary, [liteJson({ 'empty.txt': '', 'b.ts': 'b\n' })], counting);
    expect(await digest.filePage('empty.txt', null, 1000)).toEqual({
      text: '',
      tokens: 0,
      files: ['empty.txt'],
      cut_inside_file: false,
      next_cursor: null,
    });
    // In the digest it is a block of its own (its header), read like any other.
    const pages = await readAll((c) => digest.digestPage('md', c, 200), 200);
    expect(pages.join('')).toBe((await digest.digestPage('md', null, 500_000)).text);
  });

  it('cuts a long file at the last line end that fits', async () => {
    const text = Array.from({ length: 3000 }, (_, i) => `line ${i}: ${'x'.repeat(i % 97)} ${i * 7}\n`).join('');
    const digest = await ScanDigest.from(summary, [liteJson({ 'long.txt': text })], counting);
    const pages = await readAll((c) => digest.filePage('long.txt', c, 2000), 2000);
    expect(pages.join('')).toBe(text);
    // Longest: one more line would be over the budget.
    let at = 0;
    for (const page of pages.slice(0, -1)) {
      at += page.length;
      const nextLine = text.slice(at, text.indexOf('\n', at) + 1);
      expect(tokens(page + nextLine)).toBeGreaterThan(2000);
    }
  });
  it('reads a page deep in a long file counting about a page, not all that follows it', async () => {
    const text = Array.from({ length: 8000 }, (_, i) => `line ${i}: ${'x'.repeat(i % 61)}\n`).join('');
    const counted: number[] = [];
    const watched: TokenCounting = (encoding) => {
      const count = counting(encoding);
      return (contents, signal) => {
        counted.push(...contents.map((c) => c.length));
        return count(contents, signal);
      };
    };
    const budget = 300;
    const digest = await ScanDigest.from(summary, [liteJson({ 'long.txt': text })], watched);
    const first = await digest.filePage('long.txt', null, budget);
    counted.length = 0;
    const pages = [first.text];
    for (let cursor = first.next_cursor; cursor !== null;) {
      const page = await digest.filePage('long.txt', cursor, budget);
      expect(page.tokens).toBeLessThanOrEqual(budget);
      pages.push(page.text);
      cursor = page.next_cursor;
    }
    expect(pages.join('')).toBe(text);
    expect(pages.length).toBeGreaterThan(100);
    // No text longer than a budget's reach (LONGEST_TOKEN_BYTES bytes a token) is counted again.
    expect(Math.max(...counted)).toBeLessThanOrEqual(budget * LONGEST_TOKEN_BYTES);
  });
});

// Where pages are counted does not change what is read: counted in process only.
describe('ScanDigest reading', () => {
  it('reads a file longer than the text it keeps between pages once, however many pages it takes', async () => {
    const text = `${'y'.repeat(60)}\n`.repeat(140_000);
    const output = Buffer.from(liteJson({ 'big.txt': text }));
    let read = 0;
    const digest = await ScanDigest.open(
      summary,
      [{ part: undefined, bytes: output.length }],
      (_, start, end) => {
        read += end - start;
        return Promise.resolve(output.subarray(start, end));
      },
      inProcessCounting,
    );
    for (const page of [
      (c: string | null) => digest.digestPage('txt', c, 500_000),
      (c: string | null) => digest.filePage('big.txt', c, 500_000),
    ]) {
      read = 0;
      const texts: string[] = [];
      let cursor: string | null = null;
      do {
        const p = await page(cursor);
        texts.push(p.text);
        cursor = p.next_cursor;
      } while (cursor !== null);
      expect(texts.length).toBeGreaterThan(2);
      expect(texts.join('')).toContain(text);
      expect(read).toBeLessThan(output.length * 1.5);
    }
  });
});

describe('DigestCache', () => {
  let digest: ScanDigest;
  beforeAll(async () => {
    digest = await ScanDigest.from(summary, [liteJson({ 'a.ts': 'a\n' })]);
  });

  it('loads a scan once while it is kept, the least recently read going first past the bound', async () => {
    const cache = new DigestCache(100);
    const loads: string[] = [];
    const load = (key: string, bytes: number) => () => {
      loads.push(key);
      return Promise.resolve({ digest, bytes });
    };
    await Promise.all([cache.get('a', load('a', 40)), cache.get('a', load('a', 40))]);
    await cache.get('b', load('b', 40));
    await cache.get('a', load('a', 40));
    expect(loads).toEqual(['a', 'b']);
    await cache.get('c', load('c', 40)); // 120 > 100: b, read least recently, goes
    await cache.get('a', load('a', 40));
    await cache.get('b', load('b', 40));
    expect(loads).toEqual(['a', 'b', 'c', 'b']);
  });

  it('serves but does not keep a scan over the bound, and forgets a failed load', async () => {
    const cache = new DigestCache(100);
    let loads = 0;
    const big = () => {
      loads++;
      return Promise.resolve({ digest, bytes: 500 });
    };
    expect(await cache.get('big', big)).toBe(digest);
    expect(await cache.get('big', big)).toBe(digest);
    expect(loads).toBe(2);
    await expect(cache.get('bad', () => Promise.reject(new Error('gone')))).rejects.toThrow('gone');
    expect(await cache.get('bad', () => Promise.resolve({ digest, bytes: 1 }))).toBe(digest);
  });
});
