import type { RunScanDeps, TokenCounter, TokenPool } from '@reposcan/core';
import type { TokenEncoding } from './cli-args.js';

/**
 * The first this many bytes a scan counts are counted in this thread: a scan of a few small
 * files starts no tokenizer thread (each costs a start-up of its own; the tables are loaded once
 * per process either way). Past it, batches go to the pool's threads, on every core.
 */
const IN_THREAD_BYTES = 256 * 1024;

type CountTokens = NonNullable<RunScanDeps['countTokens']>;

export interface LocalTokenCounting {
  count: CountTokens;
  close(): Promise<void>;
}

/** Counting for --local that starts nothing until a content needs counting (the cache may know them all). */
export function localTokenCounting(
  encoding: TokenEncoding,
  core: {
    createTokenPool(options: { encoding: TokenEncoding }): TokenPool;
    createTokenCounter(encoding: TokenEncoding): TokenCounter;
  },
): LocalTokenCounting {
  let pool: TokenPool | null = null;
  let counter: TokenCounter | null = null;
  let inThreadLeft = IN_THREAD_BYTES;
  return {
    count(contents, signal) {
      const bytes = contents.reduce((sum, c) => sum + c.length, 0);
      if (pool === null && bytes <= inThreadLeft) {
        inThreadLeft -= bytes;
        counter ??= core.createTokenCounter(encoding);
        const inThread = counter;
        return contents.map((content) => inThread.countUtf8(content));
      }
      pool ??= core.createTokenPool({ encoding });
      return pool.count(contents, signal);
    },
    async close() {
      await pool?.close();
    },
  };
}
