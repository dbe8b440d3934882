import { describe, expect, it } from 'vitest';
import { Buffer } from 'node:buffer';
import { fenceFor, fenceForUtf8, inlineCode, tableCode } from '../../src/render/markdown-fence.js';

describe('markdown fences', () => {
  it('is three backticks for content without backticks', () => {
    expect(fenceFor('plain')).toBe('```');
  });
  it('is longer than the longest backtick run in the content', () => {
    expect(fenceFor('```ts\nx\n```')).toBe('````');
    expect(fenceFor('a ````` b')).toBe('``````');
  });
  it('is the same over UTF-8 bytes as over the text', () => {
    for (const text of ['', 'plain', '`', '``', 'a```b````c`', '```日本```😀`````', '`'.repeat(40), 'end with ``']) {
      expect(fenceForUtf8(Buffer.from(text, 'utf8'))).toBe(fenceFor(text));
    }
  });
  it('code spans survive backticks in names', () => {
    expect(inlineCode('a.ts')).toBe('`a.ts`');
    expect(inlineCode('we`ird.ts')).toBe('``we`ird.ts``');
    expect(inlineCode('`start')).toBe('`` `start ``');
  });
  it('escapes pipes inside table cells', () => {
    expect(tableCode('a|b')).toBe('`a\\|b`');
  });
});
