// In-thread exact token counting. The BPE tables load on first use (about 50 ms and 10 MB of typed
// arrays for o200k_base) and are shared by every counter of that encoding in the process.
import type { TokenEncodingName } from '../types.js';
import { createBpeCounter, loadBpeTables } from './bpe-engine.js';
import type { BpeTables } from './bpe-engine.js';
import { wasmCounter } from './bpe-wasm.js';

export interface TokenCounter {
  readonly encoding: TokenEncodingName;
  /**
   * The exact BPE token count of `text`, identical to OpenAI tiktoken's `encode_ordinary(text).length`:
   * special-token text such as `<|endoftext|>` is ordinary text. Never throws on any string, lone
   * surrogates included (they count as U+FFFD, as TextEncoder writes them).
   */
  count(text: string): number;
  /**
   * `count` of UTF-8 content, counted on the bytes: by the compiled counter where this Node runs
   * WebAssembly (this thread's one, see bpe-wasm.ts), else by the JavaScript one.
   */
  countUtf8(content: Uint8Array): number;
}

export function createTokenCounter(encoding: TokenEncodingName): TokenCounter {
  let strings: ReturnType<typeof createBpeCounter> | undefined;
  let bytes: { countUtf8: (content: Uint8Array) => number } | undefined;
  const stringCounter = (): ReturnType<typeof createBpeCounter> =>
    (strings ??= javascriptCounter(loadBpeTables(encoding)));
  const byteCounter = (): { countUtf8: (content: Uint8Array) => number } =>
    (bytes ??= wasmCounter(loadBpeTables(encoding)) ?? stringCounter());
  return {
    encoding,
    count: (text) => stringCounter().count(text),
    countUtf8: (content) => byteCounter().countUtf8(content),
  };
}

/** Strings are counted in JavaScript, their long pieces merged by this thread's compiled counter where it runs. */
function javascriptCounter(tables: BpeTables): ReturnType<typeof createBpeCounter> {
  return createBpeCounter(tables, { windows: wasmCounter(tables)?.windows });
}
