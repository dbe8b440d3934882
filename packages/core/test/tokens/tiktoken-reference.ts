// OpenAI's tiktoken (npm `tiktoken`, its Rust core compiled to WebAssembly): the counts reposcan's
// counters must equal. Special tokens are ordinary text to both (encode_ordinary).
import { get_encoding } from 'tiktoken';
import type { Tiktoken } from 'tiktoken';
import type { TokenEncodingName } from '../../src/types.js';

const encoders = new Map<TokenEncodingName, Tiktoken>();

/** tiktoken's token count of `text` in `encoding`. */
export function tiktokenCount(encoding: TokenEncodingName): (text: string) => number {
  let encoder = encoders.get(encoding);
  if (encoder === undefined) {
    encoder = get_encoding(encoding);
    encoders.set(encoding, encoder);
  }
  const found = encoder;
  return (text) => found.encode_ordinary(text).length;
}
