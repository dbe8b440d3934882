// Markdown fences and code spans that no file content or name can close early.
import { asBuffer } from '../text/utf8.js';

function longestRun(text: string, ch: string): number {
  let longest = 0;
  let run = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === ch) {
      run += 1;
      if (run > longest) longest = run;
    } else {
      run = 0;
    }
  }
  return longest;
}

/** A backtick fence longer than any backtick run inside `content` (at least three). */
export function fenceFor(content: string): string {
  return fenceOfLength(longestRun(content, '`') + 1);
}

const BACKTICK = 0x60;

/** fenceFor over UTF-8 bytes: a 0x60 byte is always a backtick there, never part of another character. */
export function fenceForUtf8(content: Uint8Array): string {
  const bytes = asBuffer(content);
  let longest = 0;
  for (let at = bytes.indexOf(BACKTICK); at !== -1;) {
    let end = at + 1;
    while (bytes[end] === BACKTICK) end++;
    if (end - at > longest) longest = end - at;
    at = bytes.indexOf(BACKTICK, end);
  }
  return fenceOfLength(longest + 1);
}

function fenceOfLength(length: number): string {
  return '`'.repeat(Math.max(3, length));
}

/** An inline code span for `text` (CommonMark: pad with spaces when it starts or ends with a backtick). */
export function inlineCode(text: string): string {
  const ticks = '`'.repeat(longestRun(text, '`') + 1);
  const pad = text.startsWith('`') || text.endsWith('`') ? ' ' : '';
  return `${ticks}${pad}${text}${pad}${ticks}`;
}

/** Inline code that is also safe inside a GFM table cell. */
export function tableCode(text: string): string {
  return inlineCode(text).replaceAll('|', '\\|');
}
