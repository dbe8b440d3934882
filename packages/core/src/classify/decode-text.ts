// Bytes → UTF-8 text bytes, or null for binary. Order: UTF-16/32 BOM, NUL bytes, strict UTF-8,
// mostly-UTF-8, legacy encodings. Every step is linear, and the common case (UTF-8) is two native
// scans and no copy: the read bytes are the text.
import { isUtf8 } from 'node:buffer';
import type { Buffer } from 'node:buffer';
import { asBuffer, utf8Encode } from '../text/utf8.js';
import { decodeLegacy } from './detect-encoding.js';
import { bytesLookLikeText, stringLooksLikeText } from './looks-like-text.js';
import { countReplacementChars, countUtf8ReplacementChars } from './replacement-char.js';
import { decodeWithBom, detectUnicodeBom } from './unicode-bom.js';

export interface DecodedText {
  /** The text as UTF-8: `bytes` itself when it was valid UTF-8 (a UTF-8 BOM stays), else a re-encoding. */
  content: Uint8Array;
  /** null = valid UTF-8, byte-exact; else the encoding the text was decoded from. */
  encoding: string | null;
  /** Characters that could not be decoded and became U+FFFD; 0 when the text is exact. */
  replacements: number;
}

/**
 * Invalid UTF-8 is still UTF-8 when the bytes hold at least as many valid multi-byte characters
 * as broken sequences: one stray byte in a German or Japanese file must not turn the whole file
 * into windows-1252 or Shift_JIS mojibake. Legacy text has the opposite shape: its non-ASCII
 * bytes rarely happen to form valid UTF-8 (Python's CJK test files have 2–7 broken sequences per
 * accidental valid one, and windows-125x text more), and with no valid one at all (ASCII and a
 * lone 0xFF) there is nothing to say it is UTF-8.
 */
function decodeMostlyUtf8(bytes: Buffer): { text: string; replacements: number } | null {
  const text = bytes.toString('utf8');
  const replacements = countReplacementChars(text) - countUtf8ReplacementChars(bytes);
  let multiByte = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    // A surrogate pair is one character: count its high half only.
    if (code >= 0x80 && code !== 0xfffd && (code < 0xdc00 || code > 0xdfff)) multiByte++;
  }
  return multiByte >= replacements ? { text, replacements } : null;
}

export function decodeText(bytes: Uint8Array): DecodedText | null {
  const bom = detectUnicodeBom(bytes);
  if (bom) {
    const { text, replacements } = decodeWithBom(bytes, bom);
    return stringLooksLikeText(text) ? { content: utf8Encode(text), encoding: bom, replacements } : null;
  }
  const buffer = asBuffer(bytes);
  // NUL never occurs in text outside UTF-16/32; Buffer#indexOf is a native byte search.
  if (buffer.indexOf(0) !== -1) return null;
  if (isUtf8(buffer)) return { content: bytes, encoding: null, replacements: 0 };
  // Cheap and encoding-independent, and it keeps the detectors away from binary data.
  if (!bytesLookLikeText(buffer)) return null;
  const utf8 = decodeMostlyUtf8(buffer);
  // Reported as `UTF-8`, not null: the text is no longer byte-exact.
  if (utf8) return { content: utf8Encode(utf8.text), encoding: 'UTF-8', replacements: utf8.replacements };
  const legacy = decodeLegacy(buffer);
  return { content: utf8Encode(legacy.text), encoding: legacy.encoding, replacements: legacy.replacements };
}
