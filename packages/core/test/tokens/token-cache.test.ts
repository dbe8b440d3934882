import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createTokenCounter } from '../../src/tokens/token-counter.js';
import { tokenCacheKey, withTokenCache } from '../../src/tokens/token-cache.js';
import { TOKEN_KEY_BYTES, TokenTable } from '../../src/tokens/token-table.js';

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

describe('TokenTable', () => {
  it('agrees with a Map over 100 000 random keys, through many resizes, replacements included', () => {
    const table = new TokenTable();
    const reference = new Map<string, number>();
    const keys: Uint8Array[] = [];
    for (let i = 0; i < 100_000; i++) {
      const key = randomBytes(TOKEN_KEY_BYTES);
      const tokens = (i * 7919) % 1_000_003;
      keys.push(key);
      table.set(key, tokens);
      reference.set(hex(key), tokens);
    }
    for (let i = 0; i < 1000; i++) {
      table.set(keys[i] as Uint8Array, i);
      reference.set(hex(keys[i] as Uint8Array), i);
    }
    expect(table.size).toBe(reference.size);
    for (const key of keys) expect(table.get(key)).toBe(reference.get(hex(key)));
    for (let i = 0; i < 1000; i++) expect(table.get(randomBytes(TOKEN_KEY_BYTES))).toBeUndefined();
  });

  it('reads keys at an offset inside a larger buffer, and keys whose words have the top bit set', () => {
    const table = new TokenTable();
    const records = Buffer.alloc(3 * 20, 0xff);
    records.writeUInt32LE(5, 16);
    records[20] = 1;
    table.set(records, 42, 20);
    expect(table.get(records, 20)).toBe(42);
    expect(table.get(records, 0)).toBeUndefined();
    table.set(Buffer.alloc(16, 0xff), 7);
    expect(table.get(records, 0)).toBe(7);
    expect(table.get(records.subarray(40))).toBe(7);
  });

  it('counts 0 is a value, not an empty slot; counts out of range are not stored', () => {
    const table = new TokenTable();
    const [a, b, c] = [randomBytes(16), randomBytes(16), randomBytes(16)];
    table.set(a, 0);
    table.set(b, -1);
    table.set(c, 0xffff_ffff);
    expect(table.get(a)).toBe(0);
    expect(table.has(b)).toBe(false);
    expect(table.has(c)).toBe(false);
    expect(table.size).toBe(1);
  });

  it('lists every entry once', () => {
    const table = new TokenTable();
    const reference = new Map<string, number>();
    for (let i = 0; i < 5000; i++) {
      const key = randomBytes(16);
      table.set(key, i);
      reference.set(hex(key), i);
    }
    const listed = new Map<string, number>();
    for (const [key, tokens] of table.entries()) listed.set(hex(key), tokens);
    expect(listed).toEqual(reference);
  });
});

describe('withTokenCache', () => {
  const counter = createTokenCounter('o200k_base');
  const texts = [
    'export const a = 1;\n',
    '# Title\n\nSome prose.\n',
    '',
    'export const a = 1;\n',
    'ünïcödé ✓ 日本語\n',
  ].map((t) => new TextEncoder().encode(t));

  it('answers exactly what the counter answers, counting only what the cache does not know', async () => {
    const table = new TokenTable();
    const cache = {
      get: (key: Uint8Array) => table.get(key),
      set: (key: Uint8Array, tokens: number) => table.set(key, tokens),
    };
    const asked: string[] = [];
    const count = (contents: Uint8Array[]): number[] => {
      asked.push(...contents.map((c) => new TextDecoder().decode(c)));
      return contents.map((c) => counter.countUtf8(c));
    };
    const expected = texts.map((t) => counter.countUtf8(t));
    const stats = { hits: 0, misses: 0 };
    const cached = withTokenCache(count, cache, stats);

    expect(await cached(texts)).toEqual(expected);
    // The repeated text is counted twice in the first batch (both missed), then never again.
    expect(asked).toHaveLength(5);
    expect(stats).toEqual({ hits: 0, misses: 5 });
    expect(table.size).toBe(4);

    asked.length = 0;
    expect(await cached([...texts].reverse())).toEqual([...expected].reverse());
    expect(asked).toEqual([]);
    expect(stats).toEqual({ hits: 5, misses: 5 });

    const changed = new TextEncoder().encode('export const a = 2;\n');
    expect(await cached([texts[0] as Uint8Array, changed])).toEqual([expected[0], counter.countUtf8(changed)]);
    expect(asked).toEqual(['export const a = 2;\n']);
  });

  it('keys are 16 bytes of SHA-256 of exactly the bytes given, wherever they live', () => {
    const shared = new Uint8Array(new SharedArrayBuffer(64), 5, 20);
    shared.set(texts[0] as Uint8Array);
    expect(hex(tokenCacheKey(shared))).toBe(hex(tokenCacheKey(texts[0] as Uint8Array)));
    expect(hex(tokenCacheKey(texts[0] as Uint8Array))).toBe(
      createHash('sha256').update('export const a = 1;\n').digest('hex').slice(0, 32),
    );
  });
});
