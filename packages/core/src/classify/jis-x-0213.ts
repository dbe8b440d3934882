// Shift_JIS-2004 and EUC-JIS-2004 (JIS X 0213) have no decoder here. They are Shift_JIS and EUC-JP
// plus kanji on codes those leave empty, and on the codes Windows-31J (the WHATWG Shift_JIS and
// EUC-JP) gives to its IBM and NEC-selected IBM extensions: decoded as Windows-31J, those would
// come out as other kanji (0xED 0x40 硃 as 纊), or on its user-defined rows as private-use
// characters. So once a file shows JIS X 0213 characters (codes Windows-31J cannot decode, or its
// user-defined rows), its extension codes are made undecodable too: U+FFFD, not a guess.
import { Buffer } from 'node:buffer';

/**
 * Shift_JIS lead bytes Windows-31J spends otherwise: 0xED–0xEE (NEC-selected IBM extensions),
 * 0xF0–0xF9 (user-defined, private-use characters) and 0xFA–0xFC (IBM extensions).
 */
const isSjisVendorLead = (byte: number): boolean => (byte >= 0xed && byte <= 0xee) || byte >= 0xf0;
const isSjisLead = (byte: number): boolean => (byte >= 0x81 && byte <= 0x9f) || (byte >= 0xe0 && byte <= 0xfc);
/** 0x85 0x80: a code in an empty row with a non-ASCII trail byte, which decodes as one U+FFFD. */
const SJIS_EMPTY = [0x85, 0x80] as const;

/** EUC-JP lead bytes of the same rows (89–92); row 9 (0xA9) is empty. */
const isEucVendorLead = (byte: number): boolean => byte >= 0xf9 && byte <= 0xfc;
const EUC_EMPTY = [0xa9, 0xa1] as const;
/**
 * After 0x8F: JIS X 0213 plane 2 has rows 78–94 (0xEE–0xFE), where the WHATWG JIS X 0212 table
 * keeps IBM extensions (0x8F 0xF3 0xA1 稸 as ⅰ). Row 1 of JIS X 0212 (0xA1) is empty.
 */
const EUC_PLANE2_EMPTY = [0xa1, 0xa1] as const;

export function withoutVendorCodes(bytes: Buffer, encoding: 'Shift_JIS' | 'EUC-JP'): Buffer {
  const out = Buffer.from(bytes);
  for (let i = 0; i < out.length; i++) {
    const byte = out[i]!;
    if (byte < 0x80 || i + 1 >= out.length) continue;
    if (encoding === 'Shift_JIS') {
      if (!isSjisLead(byte)) continue;
      if (isSjisVendorLead(byte)) [out[i], out[i + 1]] = SJIS_EMPTY;
      i++;
    } else if (byte === 0x8e) {
      i++; // half-width katakana: one more byte
    } else if (byte === 0x8f) {
      // JIS X 0212, or JIS X 0213 plane 2: two more bytes.
      if (i + 2 < out.length && out[i + 1]! >= 0xee) [out[i + 1], out[i + 2]] = EUC_PLANE2_EMPTY;
      i += 2;
    } else if (byte >= 0xa1 && byte <= 0xfe) {
      if (isEucVendorLead(byte)) [out[i], out[i + 1]] = EUC_EMPTY;
      i++;
    }
  }
  return out;
}
