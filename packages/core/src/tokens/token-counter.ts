// In-thread exact token counting. The BPE tables load on the first count() (about 50 ms and 5 MB of
// typed arrays for o200k_base) and are shared by every counter of that encoding in this thread.
import type { TokenEncodingName } from '../types.js';
import { createBpeCounter, loadBpeTables } from './bpe-engine.js';

export interface TokenCounter {
  readonly encoding: TokenEncodingName;
  /**
   * The exact BPE token count of `text`, identical to js-tiktoken's `encode(text, [], []).length`:
   * special-token text such as `<|endoftext|>` is ordinary text. Never throws on any string, lone
   * surrogates included (they count as U+FFFD, as TextEncoder writes them).
   */
  count(text: string): number;
  /** `count` of UTF-8 content: ASCII text counted on the bytes, the rest decoded a slice at a time. */
  countUtf8(content: Uint8Array): number;
}

export function createTokenCounter(encoding: TokenEncodingName): TokenCounter {
  let engine: ReturnType<typeof createBpeCounter> | undefined;
  const counter = (): ReturnType<typeof createBpeCounter> => (engine ??= createBpeCounter(loadBpeTables(encoding)));
  return {
    encoding,
    count: (text) => counter().count(text),
    countUtf8: (content) => counter().countUtf8(content),
  };
}
