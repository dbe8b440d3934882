import { asBuffer, utf8Boundary } from '../text/utf8.js';

/** Bytes per decoded slice: its JSON literal stays far below V8's large-object threshold. */
const SLICE_BYTES = 16 * 1024;

/**
 * The JSON string literal of UTF-8 `content`, in pieces whose concatenation is exactly
 * `JSON.stringify(decoded content)`. Slices end on character boundaries, so each decodes to whole
 * code points and escapes as it would inside the full string.
 */
export function* jsonStringLiteral(content: Uint8Array, sliceBytes = SLICE_BYTES): Generator<string> {
  const buffer = asBuffer(content);
  // A UTF-8 character is at most 4 bytes: a smaller slice could not always hold one.
  sliceBytes = Math.max(4, sliceBytes);
  if (buffer.length <= sliceBytes) {
    yield JSON.stringify(buffer.toString('utf8'));
    return;
  }
  yield '"';
  for (let start = 0; start < buffer.length; ) {
    const end = utf8Boundary(buffer, start + sliceBytes);
    yield JSON.stringify(buffer.toString('utf8', start, end)).slice(1, -1);
    start = end;
  }
  yield '"';
}
