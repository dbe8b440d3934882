// --local counting: a few small files are counted in this thread (no tokenizer thread starts);
// past a quarter megabyte every batch goes to the pool. The counts are the pool's either way.
import { createTokenCounter, createTokenPool } from '@reposcan/core';
import type { TokenPool } from '@reposcan/core';
import { describe, expect, it } from 'vitest';
import { localTokenCounting } from '../src/local-token-counting.js';

const utf8 = (text: string): Uint8Array => Buffer.from(text);

describe('localTokenCounting', () => {
  it('starts no pool for small scans, and hands every batch to the pool past 256 KiB, with the same counts', async () => {
    const pools: TokenPool[] = [];
    const core = {
      createTokenCounter,
      createTokenPool: (options: { encoding: 'o200k_base' | 'cl100k_base' }) => {
        const pool = createTokenPool({ ...options, threads: 1 });
        pools.push(pool);
        return pool;
      },
    };
    const counting = localTokenCounting('o200k_base', core);
    const reference = createTokenCounter('o200k_base');
    try {
      const small = [utf8('export const answer = 42;\n'), utf8('# Title\n\nSome prose.\n')];
      expect(await counting.count(small)).toEqual(small.map((c) => reference.countUtf8(c)));
      expect(pools).toHaveLength(0);

      const big = [utf8('const x = 1;\n'.repeat(25_000))];
      expect(await counting.count(big)).toEqual([reference.countUtf8(big[0]!)]);
      expect(pools).toHaveLength(1);
      // Once the pool runs, even a small batch goes to it.
      expect(await counting.count(small)).toEqual(small.map((c) => reference.countUtf8(c)));
      expect(pools).toHaveLength(1);
    } finally {
      await counting.close();
    }
  });
});
