import { Buffer, isUtf8 } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { classifyContent } from '../../src/classify/index.js';
import { encodeLegacy } from './legacy-encoder.js';

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);
const concat = (...parts: (Uint8Array | number[])[]): Uint8Array => Buffer.concat(parts.map((p) => Uint8Array.from(p)));
const utf16le = (text: string): Uint8Array => Buffer.from(text, 'utf16le');
const utf16be = (text: string): Uint8Array => Buffer.from(text, 'utf16le').swap16();

function utf32(text: string, littleEndian: boolean): Uint8Array {
  const codes = [0xfeff, ...[...text].map((c) => c.codePointAt(0)!)];
  const view = new DataView(new ArrayBuffer(codes.length * 4));
  codes.forEach((code, i) => view.setUint32(i * 4, code, littleEndian));
  return new Uint8Array(view.buffer);
}

/** Deterministic pseudo-random bytes (xorshift), optionally without NUL. */
function noise(length: number, withoutNul: boolean): Uint8Array {
  const out = new Uint8Array(length);
  let state = 0x9e3779b9;
  for (let i = 0; i < length; i++) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    out[i] = withoutNul ? 1 + ((state >>> 0) % 255) : state & 0xff;
  }
  return out;
}

const decoded = (content: Uint8Array): string => Buffer.from(content).toString('utf8');

function expectText(path: string, bytes: Uint8Array, text: string, encoding: string | null, subcategory?: string) {
  const result = classifyContent(path, bytes);
  expect(result).toMatchObject({ textual: true, encoding, ...(subcategory ? { subcategory } : {}) });
  if (!result.textual) return;
  expect(isUtf8(result.content)).toBe(true);
  expect(decoded(result.content)).toBe(text);
}

describe('classifyContent: UTF-8', () => {
  it('decodes valid UTF-8 byte-exactly with encoding null', () => {
    const text = 'const greeting = "héllo 世界 😀";\n';
    expectText('src/a.ts', utf8(text), text, null, 'code');
  });

  it('hands valid UTF-8 on as the very bytes it read, without a copy', () => {
    const bytes = utf8('export {};\n');
    const result = classifyContent('src/a.ts', bytes);
    expect(result.textual && result.content).toBe(bytes);
  });

  it('treats a shebang after a UTF-8 BOM as a script', () => {
    expectText(
      'bin/run',
      concat([0xef, 0xbb, 0xbf], utf8('#!/usr/bin/env node\n')),
      '\ufeff#!/usr/bin/env node\n',
      null,
      'code',
    );
    expectText('bin/notes', utf8(' #!not a shebang\n'), ' #!not a shebang\n', null, 'other');
  });

  it('keeps a UTF-8 BOM in the text', () => {
    const bytes = concat([0xef, 0xbb, 0xbf], utf8('# Title\n'));
    expectText('README.md', bytes, '\ufeff# Title\n', null, 'docs');
  });

  it('treats empty files as text', () => {
    expectText('empty.py', new Uint8Array(0), '', null, 'code');
    expectText('EMPTY', new Uint8Array(0), '', null, 'other');
  });

  it('uses the name for the subcategory and the content for textual-or-not', () => {
    expectText('notes.unknownext', utf8('plain words\n'), 'plain words\n', null, 'other');
    expectText('bin/deploy', utf8('#!/bin/sh\necho hi\n'), '#!/bin/sh\necho hi\n', null, 'code');
    expect(classifyContent('video.ts', concat([0x47, 0x40, 0x00, 0x10, 0x00]))).toEqual({
      textual: false,
      subcategory: 'binary',
    });
  });

  it('replaces a few broken bytes in otherwise UTF-8 text and reports it as UTF-8', () => {
    const good = '// ünïcödé text — “quoted” 日本語 and more ünïcödé ëxämplës\n'.repeat(3);
    const result = classifyContent('a.js', concat(utf8(good), [0xe9], utf8(' end\n')));
    expect(result).toMatchObject({ textual: true, encoding: 'UTF-8', subcategory: 'code', replacements: 1 });
    if (result.textual) expect(decoded(result.content)).toBe(`${good}\ufffd end\n`);
  });

  it('one stray byte after a few UTF-8 letters stays UTF-8, not windows-1252', () => {
    const bytes = concat(utf8('Grüße aus Köln\n'), [0xff], utf8('\n'));
    expectText('notes.txt', bytes, 'Grüße aus Köln\n\ufffd\n', 'UTF-8');
    expect(classifyContent('notes.txt', bytes)).toMatchObject({ replacements: 1 });
  });

  it('one UTF-8 letter and one stray byte in a long ASCII file stay UTF-8, not Shift_JIS', () => {
    const bytes = concat(utf8(`${'a'.repeat(5000)}é`), [0xff]);
    expectText('notes.txt', bytes, `${'a'.repeat(5000)}é\ufffd`, 'UTF-8');
  });

  it('counts only the characters it replaced, not a U+FFFD the file holds', () => {
    const bytes = concat(utf8('already \ufffd here, ünïcode, then '), [0xc3], utf8(' cut\n'));
    expect(classifyContent('a.txt', bytes)).toMatchObject({ encoding: 'UTF-8', replacements: 1 });
    expect(classifyContent('b.txt', utf8('already \ufffd here\n'))).toMatchObject({ encoding: null, replacements: 0 });
  });
});

describe('classifyContent: UTF-16 and UTF-32 with a BOM', () => {
  const bmp = 'Hello, wörld! Привет\r\n';
  const astral = 'emoji 😀 and 𝄞 clef\n';
  it.each([bmp, astral])('UTF-16LE: %j', (text) => {
    expectText('a.txt', concat([0xff, 0xfe], utf16le(text)), text, 'UTF-16LE', 'docs');
  });
  it.each([bmp, astral])('UTF-16BE: %j', (text) => {
    expectText('a.cs', concat([0xfe, 0xff], utf16be(text)), text, 'UTF-16BE', 'code');
  });
  it.each([bmp, astral])('UTF-32LE and BE: %j', (text) => {
    expectText('a.txt', utf32(text, true), text, 'UTF-32LE');
    expectText('a.txt', utf32(text, false), text, 'UTF-32BE');
  });
  it('counts a lone surrogate as a replacement, and a U+FFFD in the file as none', () => {
    const long = 'a line of ordinary text\n'.repeat(20);
    const lone = concat([0xff, 0xfe], utf16le(long), [0x00, 0xd8], utf16le('b\ufffd'));
    expect(classifyContent('a.txt', lone)).toMatchObject({ encoding: 'UTF-16LE', replacements: 1 });
    expectText('a.txt', lone, `${long}\ufffdb\ufffd`, 'UTF-16LE');
    expect(classifyContent('a.txt', concat([0xfe, 0xff], utf16be(`${long}\ufffd`)))).toMatchObject({ replacements: 0 });
    expect(classifyContent('a.txt', utf32(`${long}\ufffd`, true))).toMatchObject({ replacements: 0 });
    const cut = concat(utf32(long, false), [0x00, 0x00]);
    expect(classifyContent('a.txt', cut)).toMatchObject({ encoding: 'UTF-32BE', replacements: 1 });
  });
  it('calls BOM-prefixed binary binary', () => {
    expect(classifyContent('blob', concat([0xff, 0xfe], noise(4096, false)))).toMatchObject({ textual: false });
  });
});

describe('classifyContent: legacy encodings are decoded, never dropped', () => {
  it('the test encoder produces the real byte sequences', () => {
    expect([...encodeLegacy('日本', 'shift_jis')]).toEqual([0x93, 0xfa, 0x96, 0x7b]);
    expect([...encodeLegacy('中文', 'gbk')]).toEqual([0xd6, 0xd0, 0xce, 0xc4]);
    expect([...encodeLegacy('Привет', 'koi8-r')]).toEqual([0xf0, 0xd2, 0xc9, 0xd7, 0xc5, 0xd4]);
    expect([...encodeLegacy('한국', 'euc-kr')]).toEqual([0xc7, 0xd1, 0xb1, 0xb9]);
  });

  it('a lone 0xFF in ASCII decodes as windows-1252', () => {
    const bytes = concat(utf8('hello world\nthis is ascii '), [0xff], utf8(' more text\n'));
    expectText('notes.txt', bytes, 'hello world\nthis is ascii ÿ more text\n', 'windows-1252', 'docs');
  });

  it('windows-1252 text, including the 0x80–0x9F range', () => {
    // "Café: “naïve” déjà vu — 5 €\n", hand-encoded.
    const bytes = concat(
      utf8('// Caf'),
      [0xe9],
      utf8(': '),
      [0x93],
      utf8('na'),
      [0xef],
      utf8('ve'),
      [0x94],
      utf8(' d'),
      [0xe9],
      utf8('j'),
      [0xe0],
      utf8(' vu '),
      [0x97],
      utf8(' 5 '),
      [0x80],
      utf8('\n'),
    );
    expectText('a.c', bytes, '// Café: “naïve” déjà vu — 5 €\n', 'windows-1252', 'code');
  });

  it('windows-1252 text with many accented letters, some of them forming valid UTF-8 pairs, stays windows-1252', () => {
    // `Ã©` and `Ê»` are valid UTF-8 pairs by accident; the many lone `é` are not.
    const text = 'Le cœur déçu mais l’âme plutôt naïve, Louÿs rêva de crapaüter en canoë. Ã© et Ê» aussi.\n';
    const bytes = Uint8Array.from([...text.repeat(3)].map((c) => ({ œ: 0x9c, '’': 0x92 })[c] ?? c.charCodeAt(0)));
    expectText('docs/fr.txt', bytes, text.repeat(3), 'windows-1252', 'docs');
    expect(classifyContent('docs/fr.txt', bytes)).toMatchObject({ replacements: 0 });
  });

  it('short Latin text defaults to windows-1252 rather than a statistical guess', () => {
    // "café crème brûlée – windows-1252\n": chardet alone ranks windows-1250 first.
    const bytes = concat(
      utf8('caf'),
      [0xe9],
      utf8(' cr'),
      [0xe8],
      utf8('me br'),
      [0xfb],
      utf8('l'),
      [0xe9],
      utf8('e '),
      [0x96],
      utf8(' windows-1252\n'),
    );
    expectText('docs/latin1.txt', bytes, 'café crème brûlée – windows-1252\n', 'windows-1252', 'docs');
  });

  const samples: [label: string, expected: string, text: string, path: string][] = [
    [
      'shift_jis',
      'Shift_JIS',
      '// 日本語のコメントです。これはテストです。\nfunction hello() { return "こんにちは世界"; }\n',
      'hello.js',
    ],
    [
      'gbk',
      'GB18030',
      '// 这是一个中文注释，用于测试编码检测。\nint main() { printf("你好，世界"); return 0; }\n',
      'main.c',
    ],
    ['koi8-r', 'KOI8-R', '# Привет, мир! Это тестовый файл на русском языке.\nprint("Здравствуйте")\n', 'hello.py'],
    ['euc-kr', 'EUC-KR', '// 한국어 주석입니다. 인코딩 테스트를 위한 파일입니다.\nlet x = "안녕하세요";\n', 'x.rs'],
    ['big5', 'Big5', '// 這是一個繁體中文註解，用於測試編碼偵測。\nvar s = "你好世界";\n', 's.go'],
    ['windows-1251', 'windows-1251', '// Привет, мир! Это тестовый файл на русском языке.\n', 'a.java'],
    [
      'windows-1250',
      'windows-1250',
      '// Komentarz: ta funkcja zwraca wartość, która jest używana przez moduł główny.\n// Proszę nie zmieniać tego pliku ręcznie, ponieważ jest generowany automatycznie.\n',
      'main.cpp',
    ],
  ];
  it.each(samples)('%s', (label, expected, text, path) => {
    expectText(path, encodeLegacy(text, label), text, expected, 'code');
  });

  it('one stray byte does not turn a Shift_JIS file into mojibake', () => {
    const [, , text] = samples[0]!;
    const bytes = concat(encodeLegacy(text.repeat(4), 'shift_jis'), [0xfd], encodeLegacy(text, 'shift_jis'));
    expectText('hello.js', bytes, `${text.repeat(4)}\ufffd${text}`, 'Shift_JIS', 'code');
  });

  it('Shift_JIS-2004 keeps no Windows-31J extension kanji: they are U+FFFD like the JIS X 0213 ones', () => {
    const [, , text] = samples[0]!;
    const body = encodeLegacy(text.repeat(4), 'shift_jis');
    // 0xED 0x40 is 纊 in Windows-31J (an IBM extension) and 硃 in JIS X 0213; 0xF0 0x40 is 𠂉 in
    // JIS X 0213 only (a private-use character in Windows-31J).
    const windows31j = concat(body, [0xed, 0x40], utf8('\n'));
    expectText('a.js', windows31j, `${text.repeat(4)}纊\n`, 'Shift_JIS', 'code');
    const jis2004 = concat(body, [0xed, 0x40, 0xf0, 0x40], utf8('\n'));
    expectText('a.js', jis2004, `${text.repeat(4)}\ufffd\ufffd\n`, 'Shift_JIS', 'code');
    expect(classifyContent('a.js', jis2004)).toMatchObject({ replacements: 2 });
  });

  it('decodes a file larger than the detection sample in full', () => {
    const text = '# Привет, мир! Это тестовый файл на русском языке.\n'.repeat(3000);
    const bytes = encodeLegacy(text, 'koi8-r');
    expect(bytes.length).toBeGreaterThan(64 * 1024);
    expectText('big.py', bytes, text, 'KOI8-R', 'code');
  });
});

describe('classifyContent: binary', () => {
  it('NUL bytes with an unknown extension are binary', () => {
    expect(classifyContent('data.unknownext', concat(utf8('abc'), [0], utf8('def')))).toEqual({
      textual: false,
      subcategory: 'binary',
    });
  });

  it('a .zip is binary even without NUL bytes, without looking at the content', () => {
    expect(classifyContent('release.zip', utf8('just text'))).toEqual({ textual: false, subcategory: 'binary' });
    expect(classifyContent('LOGO.PNG', utf8('just text'))).toEqual({ textual: false, subcategory: 'image' });
  });

  it('sniffs the kind of an unnamed asset from its magic number', () => {
    const png = concat([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);
    expect(classifyContent('image', png)).toEqual({ textual: false, subcategory: 'image' });
    const pdf = concat(utf8('%PDF-1.7\n'), [0xe2, 0xe3, 0xcf, 0xd3, 0x0a, 0x00]);
    expect(classifyContent('download', pdf)).toEqual({ textual: false, subcategory: 'pdf' });
  });

  it('binary bytes under a text name are binary, never sniffed into a media kind', () => {
    // Three MPEG transport stream packets (sync byte 0x47 every 188 bytes) behind an ID3 tag, as
    // HLS segments carry timed metadata: `.ts` is TypeScript by name, and the content is not text.
    const packet = (pid: number): number[] => [0x47, 0x40 | (pid >> 8), pid & 0xff, 0x10, ...noise(184, false)];
    const segment = concat(utf8('ID3'), [0x04, 0, 0, 0, 0, 0, 0], packet(0), packet(0x100), packet(0x101));
    expect(classifyContent('hls/segment0.ts', segment)).toEqual({ textual: false, subcategory: 'binary' });
    // The same bytes under a name that says nothing are sniffed.
    expect(classifyContent('hls/segment0', segment)).toEqual({ textual: false, subcategory: 'audio' });
  });

  it('control-heavy bytes without NUL are binary', () => {
    expect(classifyContent('blob', noise(8192, true))).toEqual({ textual: false, subcategory: 'binary' });
  });
});

// How fast these run is measured by `npm run bench`; here only what they return.
describe('classifyContent: inputs that make other detectors slow or wrong', () => {
  it('1 MB of random bytes, with or without NUL, is binary', () => {
    for (const withoutNul of [false, true]) {
      expect(classifyContent('blob.unknownext', noise(1024 * 1024, withoutNul))).toEqual({
        textual: false,
        subcategory: 'binary',
      });
    }
  });

  it('a 4 KB Korean Markdown file is UTF-8 text, and EUC-KR when encoded so (a peer took 3.5 s on one)', () => {
    const text = '# 한국어 문서\n\n이 문서는 인코딩 감지 성능을 확인하기 위한 한국어 마크다운 파일입니다.\n'.repeat(40);
    expectText('docs/ko.md', utf8(text), text, null, 'docs');
    expectText('docs/ko.md', encodeLegacy(text, 'euc-kr'), text, 'EUC-KR', 'docs');
  });

  it('10 MB of UTF-8 is passed on as read: no decode, no copy', () => {
    const bytes = utf8('export const value = "héllo wörld 日本語"; // ünïcödé comment\n'.repeat(170_000));
    const result = classifyContent('big.ts', bytes);
    expect(result).toMatchObject({ textual: true, encoding: null });
    expect(result.textual && result.content).toBe(bytes);
  });
});
