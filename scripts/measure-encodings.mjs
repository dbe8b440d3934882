// Measures legacy-encoding detection on the labelled corpus of scripts/make-encoding-corpus.py
// (Python's CJK test files and single-byte samples encoded by Python): what each detector guesses,
// how fast, and what reposcan outputs for each file, judged against Python's own decoding.
//
//   node --import tsx --conditions=source scripts/measure-encodings.mjs [--rounds 200]
//
// Detectors: chardet (ICU's detector, the one reposcan uses) and jschardet (Mozilla's, as ported
// from Python chardet; VS Code's). A guess is right when it names the encoding or one that decodes
// the file the same (a superset such as GB18030 for GBK, windows-1252 for ISO-8859-1).
/* global console, process, performance */
import { readFileSync } from 'node:fs';
import { fileURLToPath, URL } from 'node:url';
import chardet from 'chardet';
import jschardet from 'jschardet';
import { judgeSample } from '../packages/core/test/classify/encoding-corpus.ts';

const DIR = fileURLToPath(new URL('../packages/core/test/fixtures/encodings/', import.meta.url));
const corpus = JSON.parse(readFileSync(`${DIR}corpus.json`, 'utf8'));
const rounds = Number(process.argv[process.argv.indexOf('--rounds') + 1]) || 200;

/** Python codec → the names a detector may give that decode the file the same. */
const SAME = {
  big5: ['big5', 'big5-hkscs', 'big5hkscs'],
  big5hkscs: ['big5-hkscs', 'big5hkscs'],
  cp949: ['cp949', 'uhc', 'windows-949'],
  euc_jisx0213: ['euc-jis-2004', 'euc_jisx0213'],
  euc_jp: ['euc-jp'],
  euc_kr: ['euc-kr', 'cp949', 'uhc'],
  gb18030: ['gb18030'],
  gb2312: ['gb2312', 'gbk', 'gb18030'],
  gbk: ['gbk', 'gb18030'],
  johab: ['johab'],
  shift_jis: ['shift_jis', 'cp932', 'windows-31j'],
  shift_jisx0213: ['shift_jis_2004', 'shift_jisx0213'],
  cp1252: ['windows-1252'],
  latin_1: ['iso-8859-1', 'windows-1252'],
  cp1250: ['windows-1250'],
  iso8859_2: ['iso-8859-2'],
  cp1251: ['windows-1251'],
  koi8_r: ['koi8-r'],
  iso8859_5: ['iso-8859-5'],
  cp1253: ['windows-1253'],
  iso8859_7: ['iso-8859-7'],
  cp1254: ['windows-1254'],
  cp1255: ['windows-1255'],
  iso8859_8: ['iso-8859-8'],
  cp1256: ['windows-1256'],
  cp1257: ['windows-1257'],
  cp874: ['windows-874', 'tis-620'],
};

const detectors = {
  chardet: (bytes) => chardet.detect(bytes) ?? '',
  jschardet: (bytes) => jschardet.detect(bytes).encoding ?? '',
};

const rows = [];
const totals = Object.fromEntries(Object.keys(detectors).map((name) => [name, { right: 0, ms: 0 }]));
for (const sample of corpus) {
  const bytes = readFileSync(DIR + sample.file);
  const row = { file: sample.file, bytes: bytes.length };
  for (const [name, detect] of Object.entries(detectors)) {
    const guess = detect(bytes);
    const right = SAME[sample.codec].includes(guess.toLowerCase());
    const started = performance.now();
    for (let i = 0; i < rounds; i++) detect(bytes);
    totals[name].ms += (performance.now() - started) / rounds;
    totals[name].right += right ? 1 : 0;
    row[name] = `${guess || '(none)'}${right ? '' : ' ✗'}`;
  }
  const { encoding, outcome, replacements } = judgeSample(sample);
  Object.assign(row, { encoding, outcome: outcome === 'replaced' ? `${replacements} replaced` : outcome });
  rows.push(row);
}

const columns = ['file', 'bytes', ...Object.keys(detectors), 'encoding', 'outcome'];
console.log(`| ${columns.join(' | ')} |`);
console.log(`|${columns.map(() => '---').join('|')}|`);
for (const row of rows) console.log(`| ${columns.map((c) => row[c]).join(' | ')} |`);
console.log('');
for (const [name, { right, ms }] of Object.entries(totals))
  console.log(
    `${name}: ${right}/${corpus.length} right, ${((ms * 1000) / corpus.length).toFixed(0)} µs per file on average`,
  );
