// UTF-16 and UTF-32 files are recognised only by their byte-order mark: without one their NUL
// bytes make them binary. A UTF-8 BOM needs nothing here: it is valid UTF-8 and stays in the text.
import { countReplacementChars, REPLACEMENT } from './replacement-char.js';

export type BomEncoding = 'UTF-16LE' | 'UTF-16BE' | 'UTF-32LE' | 'UTF-32BE';

export function detectUnicodeBom(bytes: Uint8Array): BomEncoding | null {
  const [b0, b1, b2, b3] = bytes;
  // UTF-32LE first: its BOM starts with the UTF-16LE one.
  if (b0 === 0xff && b1 === 0xfe) return b2 === 0x00 && b3 === 0x00 ? 'UTF-32LE' : 'UTF-16LE';
  if (b0 === 0xfe && b1 === 0xff) return 'UTF-16BE';
  if (b0 === 0x00 && b1 === 0x00 && b2 === 0xfe && b3 === 0xff) return 'UTF-32BE';
  return null;
}

/** Characters per String.fromCodePoint call: well under any engine's argument limit. */
const CHUNK = 8192;

// TextDecoder has no UTF-32 (the WHATWG Encoding standard dropped it), so decode by hand.
function decodeUtf32(bytes: Uint8Array, littleEndian: boolean): DecodedUnicode {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const parts: string[] = [];
  const codes: number[] = [];
  let replacements = 0;
  for (let offset = 4; offset + 4 <= bytes.length; offset += 4) {
    const code = view.getUint32(offset, littleEndian);
    const valid = code <= 0x10ffff && (code < 0xd800 || code > 0xdfff);
    if (!valid) replacements++;
    codes.push(valid ? code : 0xfffd);
    if (codes.length === CHUNK) {
      parts.push(String.fromCodePoint(...codes));
      codes.length = 0;
    }
  }
  parts.push(String.fromCodePoint(...codes));
  // A trailing partial code unit is undecodable, as TextDecoder would report it.
  if (bytes.length % 4 !== 0) {
    parts.push(REPLACEMENT);
    replacements++;
  }
  return { text: parts.join(''), replacements };
}

/** U+FFFD written as a UTF-16 code unit: the file's own, not a replacement. */
function countUtf16ReplacementUnits(bytes: Uint8Array, littleEndian: boolean): number {
  const [low, high] = littleEndian ? [0xfd, 0xff] : [0xff, 0xfd];
  let count = 0;
  for (let i = 0; i + 1 < bytes.length; i += 2) if (bytes[i] === low && bytes[i + 1] === high) count++;
  return count;
}

function decodeUtf16(bytes: Uint8Array, littleEndian: boolean): DecodedUnicode {
  const body = bytes.subarray(2);
  const text = new TextDecoder(littleEndian ? 'utf-16le' : 'utf-16be', { ignoreBOM: true }).decode(body);
  return { text, replacements: countReplacementChars(text) - countUtf16ReplacementUnits(body, littleEndian) };
}

export interface DecodedUnicode {
  text: string;
  /** Units that were not valid UTF-16 or UTF-32 (lone surrogates, a cut unit), now U+FFFD. */
  replacements: number;
}

/** Decodes the text after the BOM; the BOM itself is dropped, as the output is UTF-8. */
export function decodeWithBom(bytes: Uint8Array, encoding: BomEncoding): DecodedUnicode {
  switch (encoding) {
    case 'UTF-16LE':
      return decodeUtf16(bytes, true);
    case 'UTF-16BE':
      return decodeUtf16(bytes, false);
    case 'UTF-32LE':
      return decodeUtf32(bytes, true);
    case 'UTF-32BE':
      return decodeUtf32(bytes, false);
  }
}
