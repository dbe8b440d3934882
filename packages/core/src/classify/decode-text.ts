// Bytes → UTF-8 text bytes, or null for binary. Order: UTF-16/32 BOM, NUL bytes, strict UTF-8,
// legacy encodings. Every step is linear, and the common case (UTF-8) is two native scans and no
// copy: the read bytes are the text.
import { isUtf8 } from 'node:buffer';
import { asBuffer, utf8Encode } from '../text/utf8.js';
import { decodeLegacy } from './detect-encoding.js';
import { stringLooksLikeText } from './looks-like-text.js';
import { decodeWithBom, detectUnicodeBom } from './unicode-bom.js';

export interface DecodedText {
  /** The text as UTF-8: `bytes` itself when it was valid UTF-8 (a UTF-8 BOM stays), else a re-encoding. */
  content: Uint8Array;
  /** null = valid UTF-8, byte-exact; else the encoding the text was decoded from. */
  encoding: string | null;
}

export function decodeText(bytes: Uint8Array): DecodedText | null {
  const bom = detectUnicodeBom(bytes);
  if (bom) {
    const text = decodeWithBom(bytes, bom);
    return stringLooksLikeText(text) ? { content: utf8Encode(text), encoding: bom } : null;
  }
  const buffer = asBuffer(bytes);
  // NUL never occurs in text outside UTF-16/32; Buffer#indexOf is a native byte search.
  if (buffer.indexOf(0) !== -1) return null;
  if (isUtf8(buffer)) return { content: bytes, encoding: null };
  const legacy = decodeLegacy(buffer);
  return legacy && { content: utf8Encode(legacy.text), encoding: legacy.encoding };
}
