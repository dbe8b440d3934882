// The last word on "is this text": text has almost no C0 control characters besides the
// whitespace ones and ESC (ANSI colour codes in logs). Random or compressed bytes have about 10 %.

/** Text may have at most this share of suspicious characters. */
const MAX_SUSPICIOUS_RATIO = 0.01;

/** Only this much is inspected, so the check costs the same on any file size. */
export const SAMPLE_UNITS = 64 * 1024;

function isSuspicious(code: number): boolean {
  if (code < 0x20)
    return !(code === 0x09 || code === 0x0a || code === 0x0b || code === 0x0c || code === 0x0d || code === 0x1b);
  return code === 0x7f;
}

/**
 * Byte-level check for ASCII-compatible encodings: in all of them (single-byte, Shift_JIS, GBK,
 * Big5, EUC-*), bytes below 0x20 are control characters, never part of a multi-byte sequence.
 */
export function bytesLookLikeText(bytes: Uint8Array): boolean {
  const end = Math.min(bytes.length, SAMPLE_UNITS);
  let suspicious = 0;
  for (let i = 0; i < end; i++) if (isSuspicious(bytes[i]!)) suspicious++;
  return suspicious <= end * MAX_SUSPICIOUS_RATIO;
}

/** The same check on decoded text; U+FFFD (an undecodable unit) counts as suspicious too. */
export function stringLooksLikeText(text: string): boolean {
  const end = Math.min(text.length, SAMPLE_UNITS);
  let suspicious = 0;
  for (let i = 0; i < end; i++) {
    const code = text.charCodeAt(i);
    if (code === 0xfffd || isSuspicious(code)) suspicious++;
  }
  return suspicious <= end * MAX_SUSPICIOUS_RATIO;
}
