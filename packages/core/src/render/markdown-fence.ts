// Markdown fences and code spans that no file content or name can close early.

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
  return '`'.repeat(Math.max(3, longestRun(content, '`') + 1));
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
