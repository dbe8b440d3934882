// The labelled legacy-encoding corpus (packages/core/test/fixtures/encodings, written once by
// scripts/make-encoding-corpus.py from Python's codecs) and how an output compares with Python's
// decoding. Shared by the unit test and scripts/measure-encodings.mjs.
import { Buffer } from 'node:buffer';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { classifyContent } from '../../src/classify/index.js';

const DIR = fileURLToPath(new URL('../fixtures/encodings/', import.meta.url));

export interface CorpusSample {
  file: string;
  /** Python's codec name. */
  codec: string;
}

export const CORPUS: readonly CorpusSample[] = JSON.parse(readFileSync(`${DIR}corpus.json`, 'utf8')) as CorpusSample[];

export const sampleBytes = (sample: CorpusSample): Buffer => readFileSync(DIR + sample.file);

/** `exact`; `replaced`: Python's text with some characters shown as U+FFFD, nothing else; `wrong`. */
export type Outcome = 'exact' | 'replaced' | 'wrong' | 'binary';

function onlyReplaced(got: string, want: string): boolean {
  let at = 0;
  for (const char of got) {
    if (char === '\ufffd') continue;
    at = want.indexOf(char, at);
    if (at === -1) return false;
    at += char.length;
  }
  return true;
}

export function judgeSample(sample: CorpusSample): { encoding: string | null; outcome: Outcome; replacements: number } {
  const want = readFileSync(DIR + sample.file.replace(/\.txt$/, '.utf8'), 'utf8');
  const result = classifyContent(sample.file, sampleBytes(sample));
  if (!result.textual) return { encoding: null, outcome: 'binary', replacements: 0 };
  const got = Buffer.from(result.content).toString('utf8');
  const outcome = got === want ? 'exact' : onlyReplaced(got, want) ? 'replaced' : 'wrong';
  return { encoding: result.encoding, outcome, replacements: result.replacements };
}
