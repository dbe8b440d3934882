import { describe, expect, it } from 'vitest';
import { bytesOfShownName, decodePathBytes, fsPath, pathBytesOf, shownPath } from '../src/path-bytes.js';
import { buildFileUrl } from '../src/render/file-url.js';

describe('paths carried as bytes', () => {
  it('decode UTF-8 as it is and keep every other byte, back to the same bytes', () => {
    // caf + 0xE9, `/`, an emoji, an encoded surrogate (not UTF-8), a lone continuation byte, `%`
    const bytes = Buffer.from('636166e92ff09f9880eda08080' + '25', 'hex');
    const carried = decodePathBytes(bytes);
    expect(carried).toBe('caf\udce9/😀\udced\udca0\udc80\udc80%');
    expect(pathBytesOf(carried)).toEqual(bytes);
    expect(fsPath(carried)).toEqual(bytes);
    expect(fsPath('café/😀')).toBe('café/😀');
  });

  it('show a name that is not UTF-8, or starts with a quote, quoted with percent escapes', () => {
    expect(shownPath(decodePathBytes(Buffer.from('caf\xe9.txt', 'latin1')))).toBe('"caf%E9.txt"');
    expect(shownPath(decodePathBytes(Buffer.from('d\xe9j\xe0/50%.md', 'latin1')))).toBe('"d%E9j%E0"/50%.md');
    expect(shownPath(decodePathBytes(Buffer.from('a/\xff%"', 'latin1')))).toBe('a/"%FF%25%22"');
    expect(shownPath('"quoted"/b"')).toBe('"%22quoted%22"/b"');
    // Valid UTF-8 names that look like a quoted one are shown as they are: they do not start with `"`.
    expect(shownPath('caf%E9.txt/😀')).toBe('caf%E9.txt/😀');
  });

  it('read back to the bytes of the name, and link to the host by those bytes', () => {
    for (const hex of ['636166e92e747874', '2271756f7465', 'ff2522', '636166c3a9']) {
      const name = shownPath(decodePathBytes(Buffer.from(hex, 'hex')));
      expect(bytesOfShownName(name).toString('hex')).toBe(hex);
    }
    const source = {
      type: 'remote' as const,
      url: 'https://github.com/o/r',
      hostFamily: 'github' as const,
      ref: 'main',
      branch: 'main',
      commit: null,
      subdir: null,
    };
    expect(buildFileUrl(source, '"d%E9j%E0"/café 1.md')).toBe(
      'https://github.com/o/r/blob/main/d%E9j%E0/caf%C3%A9%201.md',
    );
  });
});
