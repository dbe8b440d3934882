import { describe, expect, it } from 'vitest';
import { CORPUS, judgeSample } from './encoding-corpus.js';
import type { Outcome } from './encoding-corpus.js';

// What a user gets for each file of the labelled corpus, judged against Python's own decoding.
// `wrong` rows are the known misses, kept so a better detector shows up here: no detector on npm
// we measured (chardet, jschardet; bench/README.md) names these short CP949, Big5-HKSCS and Johab
// samples; and Python composes EUC-KR's 8-byte jamo sequences into syllables where the WHATWG
// decoder gives the jamo.
const EXPECTED: Record<string, [encoding: string | null, outcome: Outcome]> = {
  'big5.txt': ['Big5', 'exact'],
  'big5hkscs.txt': ['windows-1252', 'wrong'],
  'cp949.txt': ['windows-1252', 'wrong'],
  'euc_jisx0213.txt': ['EUC-JP', 'replaced'],
  'euc_jp.txt': ['EUC-JP', 'exact'],
  'euc_kr.txt': ['EUC-KR', 'wrong'],
  'gb18030.txt': ['GB18030', 'exact'],
  'gb2312.txt': ['GB18030', 'exact'],
  'gbk.txt': ['GB18030', 'exact'],
  'johab.txt': ['windows-1252', 'wrong'],
  'shift_jis.txt': ['Shift_JIS', 'exact'],
  'shift_jisx0213.txt': ['Shift_JIS', 'replaced'],
  'fr-cp1252.txt': ['windows-1252', 'exact'],
  'de-cp1252.txt': ['windows-1252', 'exact'],
  'de-latin_1.txt': ['windows-1252', 'exact'],
  'pl-cp1250.txt': ['windows-1250', 'exact'],
  'cs-cp1250.txt': ['windows-1250', 'exact'],
  'pl-iso8859_2.txt': ['ISO-8859-2', 'exact'],
  'ru-cp1251.txt': ['windows-1251', 'exact'],
  'uk-cp1251.txt': ['windows-1251', 'exact'],
  'ru-koi8_r.txt': ['KOI8-R', 'exact'],
  'ru-iso8859_5.txt': ['ISO-8859-5', 'exact'],
  'el-cp1253.txt': ['ISO-8859-7', 'exact'],
  'el-iso8859_7.txt': ['ISO-8859-7', 'exact'],
  'tr-cp1254.txt': ['windows-1254', 'exact'],
  'he-cp1255.txt': ['ISO-8859-8', 'exact'],
  'he-iso8859_8.txt': ['ISO-8859-8', 'exact'],
  'ar-cp1256.txt': ['windows-1256', 'exact'],
  'lt-cp1257.txt': ['windows-1257', 'exact'],
  'th-cp874.txt': ['windows-874', 'exact'],
};

describe('legacy encodings on the labelled corpus', () => {
  it('has an expectation for every sample', () => {
    expect(CORPUS.map((s) => s.file).sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  it.each(CORPUS.map((sample) => [sample.file, sample] as const))('%s', (file, sample) => {
    const { encoding, outcome, replacements } = judgeSample(sample);
    expect({ encoding, outcome }).toEqual({ encoding: EXPECTED[file]![0], outcome: EXPECTED[file]![1] });
    // Replacements are counted exactly when the text is otherwise Python's.
    if (outcome === 'exact') expect(replacements).toBe(0);
    if (outcome === 'replaced') expect(replacements).toBeGreaterThan(0);
  });
});
