// windows-1252 decoding without TextDecoder: since Node 20.18.3 / 22.13.0, TextDecoder decodes
// windows-1252 as ISO-8859-1, so 0x80–0x9F come out as C1 controls instead of € ‚ “ ” …
// (nodejs/node#60888). A 256-entry table is exact on every version, and linear.
import { Buffer } from 'node:buffer';

/** WHATWG index-windows-1252 for 0x80–0x9F; the five unassigned bytes map to themselves. */
const C1_RANGE =
  '\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f' +
  '\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178';

/** Byte → UTF-16 code unit: Latin-1 everywhere except 0x80–0x9F. */
const TABLE = Uint16Array.from({ length: 256 }, (_, byte) =>
  byte >= 0x80 && byte < 0xa0 ? C1_RANGE.charCodeAt(byte - 0x80) : byte,
);

export function decodeWindows1252(bytes: Uint8Array): string {
  const units = new Uint16Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) units[i] = TABLE[bytes[i]!]!;
  return Buffer.from(units.buffer, units.byteOffset, units.byteLength).toString('utf16le');
}
