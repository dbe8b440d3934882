import { Buffer } from 'node:buffer';
import { asBuffer } from '../text/utf8.js';

/** Bytes per slice: its escaped copy stays far below V8's large-object threshold. */
const SLICE_BYTES = 64 * 1024;

/**
 * The JSON string literal of UTF-8 `content` as UTF-8 bytes, in pieces whose concatenation is
 * exactly the UTF-8 of `JSON.stringify(decoded content)`.
 *
 * JSON.stringify escapes only '"', '\\' and code units below 0x20 (and lone surrogates, which
 * valid UTF-8 never decodes to), all ASCII. Seen as latin1, every byte is one code unit below
 * 0x100, so stringifying the latin1 view escapes exactly those bytes and leaves every byte of a
 * multi-byte character alone; writing the result back as latin1 restores those bytes. Three native
 * passes, no UTF-8 decode or encode, and slices may cut anywhere, even inside a character.
 */
export function* jsonStringLiteral(content: Uint8Array, sliceBytes = SLICE_BYTES): Generator<Uint8Array> {
  const buffer = asBuffer(content);
  sliceBytes = Math.max(1, sliceBytes);
  if (buffer.length <= sliceBytes) {
    yield Buffer.from(JSON.stringify(buffer.toString('latin1')), 'latin1');
    return;
  }
  yield QUOTE;
  for (let start = 0; start < buffer.length; start += sliceBytes) {
    const escaped = JSON.stringify(buffer.toString('latin1', start, Math.min(buffer.length, start + sliceBytes)));
    // Without its quotes: write the slice's interior straight from the string.
    yield Buffer.from(escaped.slice(1, -1), 'latin1');
  }
  yield QUOTE;
}

const QUOTE = Buffer.from('"', 'latin1');
