// U+FFFD stands for what a decoder could not decode. Counting it tells a user which files are not
// exactly what the repository holds; a file may also hold the character itself, which is no
// replacement, so each decoder subtracts the ones its source spelled out.
import type { Buffer } from 'node:buffer';

export const REPLACEMENT = '\ufffd';

/** U+FFFD written in UTF-8. */
const REPLACEMENT_UTF8 = Uint8Array.of(0xef, 0xbf, 0xbd);

export function countReplacementChars(text: string): number {
  let count = 0;
  for (let i = text.indexOf(REPLACEMENT); i !== -1; i = text.indexOf(REPLACEMENT, i + 1)) count++;
  return count;
}

/** U+FFFD spelled out in UTF-8 bytes (Buffer#indexOf is a native search). */
export function countUtf8ReplacementChars(bytes: Buffer): number {
  let count = 0;
  for (let i = bytes.indexOf(REPLACEMENT_UTF8); i !== -1; i = bytes.indexOf(REPLACEMENT_UTF8, i + 3)) count++;
  return count;
}
