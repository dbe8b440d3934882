// Bytes → JS string, or null for binary. Order: UTF-16/32 BOM, NUL bytes, strict UTF-8, legacy
// encodings. Every step is linear and the common case (UTF-8) costs about isUtf8 + toString.
import { Buffer, isUtf8 } from 'node:buffer';
import { decodeLegacy } from './detect-encoding.js';
import { stringLooksLikeText } from './looks-like-text.js';
import { decodeWithBom, detectUnicodeBom } from './unicode-bom.js';

export interface DecodedText {
  text: string;
  /** null = valid UTF-8, decoded byte-exactly (a UTF-8 BOM stays in `text`). */
  encoding: string | null;
}

export function decodeText(bytes: Uint8Array): DecodedText | null {
  const bom = detectUnicodeBom(bytes);
  if (bom) {
    const text = decodeWithBom(bytes, bom);
    return stringLooksLikeText(text) ? { text, encoding: bom } : null;
  }
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // NUL never occurs in text outside UTF-16/32; Buffer#indexOf is a native byte search.
  if (buffer.indexOf(0) !== -1) return null;
  if (isUtf8(buffer)) return { text: buffer.toString('utf8'), encoding: null };
  return decodeLegacy(buffer);
}
