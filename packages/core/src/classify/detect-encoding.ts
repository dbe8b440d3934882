// Text that is neither valid UTF-8 nor marked by a BOM: a legacy encoding (Latin-1, Shift_JIS,
// GBK, KOI8-R, …). Peers call such files binary and drop them; we decode them. chardet ranks the
// candidates from a bounded sample (jschardet breaks its ties among Latin encodings), and the
// first one that decodes the sample (almost) cleanly wins, or one chardet is sure of. A guess with
// no decoder here is skipped, never decoded as a look-alike; what a decoder cannot map is U+FFFD.
import type { Buffer } from 'node:buffer';
import { createRequire } from 'node:module';
import type * as Chardet from 'chardet';
import type { Match } from 'chardet';
import type * as Iconv from 'iconv-lite';
import type * as Jschardet from 'jschardet';
import { withoutVendorCodes } from './jis-x-0213.js';
import { SAMPLE_UNITS } from './looks-like-text.js';
import { countReplacementChars } from './replacement-char.js';
import { decodeWindows1252 } from './windows-1252.js';

export interface LegacyText {
  text: string;
  /** The encoding decoded from, as reported in outputs (`Shift_JIS`, `windows-1252`, …). */
  encoding: string;
  /** Byte sequences the encoding does not define, now U+FFFD. */
  replacements: number;
}

interface Detectors {
  analyse: typeof Chardet.analyse;
  iconv: typeof Iconv;
  jschardet: typeof Jschardet;
}

let detectors: Detectors | undefined;

/**
 * Loaded on the first file that needs them: most trees have none, and loading the three took
 * about 40 ms of every CLI run's start.
 */
function loadDetectors(): Detectors {
  if (!detectors) {
    const require = createRequire(import.meta.url);
    detectors = {
      analyse: (require('chardet') as typeof Chardet).analyse,
      iconv: require('iconv-lite') as typeof Iconv,
      jschardet: require('jschardet') as typeof Jschardet,
    };
  }
  return detectors;
}

/** Decodes every byte; undecodable sequences become U+FFFD. */
type Decode = (bytes: Buffer) => string;

/**
 * iconv-lite decodes the same on every Node build: Node's TextDecoder leans on ICU, which decodes
 * `big5` without HKSCS (as private-use characters) and `euc-kr` without the windows-949
 * extension (0x81 0x41 `갂` came out as `A`), and a Node without full ICU has neither.
 */
function iconvDecoder(name: string): Decode {
  return (bytes) => loadDetectors().iconv.decode(bytes, name);
}

/**
 * TextDecoder where ICU follows the WHATWG standard (Shift_JIS, EUC-JP, GB18030): on a sequence it
 * cannot map, iconv-lite decodes the second byte again on its own, so a JIS X 0213 kanji came out
 * as U+FFFD plus `K` or a half-width katakana; TextDecoder gives one U+FFFD, as the standard says.
 * iconv-lite stands in on a Node built without these encodings.
 */
function standardDecoder(label: string): Decode {
  const fallback = iconvDecoder(label);
  return (bytes) => {
    try {
      return new TextDecoder(label).decode(bytes);
    } catch {
      return fallback(bytes);
    }
  };
}

/**
 * chardet's names → [name reported in outputs, decoder]. The decoders are the WHATWG Encoding
 * standard's, as browsers use them: ISO-8859-1 and ISO-8859-9 decode as their windows-125x
 * supersets and are reported under the name actually used; Big5 includes HKSCS and EUC-KR the
 * windows-949 (CP949) extension.
 */
const DECODERS: ReadonlyMap<string, readonly [encoding: string, decode: Decode]> = new Map([
  ['ISO-8859-1', ['windows-1252', decodeWindows1252]],
  ['windows-1252', ['windows-1252', decodeWindows1252]],
  ['ISO-8859-9', ['windows-1254', iconvDecoder('windows-1254')]],
  ['Big5', ['Big5', iconvDecoder('big5hkscs')]],
  ['EUC-KR', ['EUC-KR', iconvDecoder('cp949')]],
  ...['EUC-JP', 'GB18030', 'Shift_JIS'].map((name) => [name, [name, standardDecoder(name)]] as const),
  ...[
    'ISO-8859-2',
    'ISO-8859-5',
    'ISO-8859-6',
    'ISO-8859-7',
    'ISO-8859-8',
    'KOI8-R',
    'windows-1250',
    'windows-1251',
    'windows-1253',
    'windows-1254',
    'windows-1255',
    'windows-1256',
    'windows-1257',
    'windows-1258',
    'windows-874',
  ].map((name) => [name, [name, iconvDecoder(name)]] as const),
]);

/**
 * Multi-byte encodings whose detector chardet trusts fully (confidence 100) only on many valid
 * characters and almost no invalid ones. Such a guess is kept even when some sequences do not
 * decode: a Shift_JIS-2004 or EUC-JIS-2004 file is Shift_JIS or EUC-JP plus characters no
 * decoder here knows, and those become U+FFFD instead of the whole file becoming windows-125x.
 */
const MULTI_BYTE = new Set(['Big5', 'EUC-JP', 'EUC-KR', 'GB18030', 'Shift_JIS']);
const SURE = 100;

/**
 * A right guess decodes nearly everything: allow one bad character per thousand (plus one for a
 * character cut at the sample's end), so one stray byte does not turn a whole file into mojibake.
 */
function fewReplacements(text: string): boolean {
  return countReplacementChars(text) <= 1 + text.length / 1000;
}

/** Single-byte encodings for Latin scripts, which chardet tells apart by letter statistics. */
const LATIN_SINGLE_BYTE = new Set([
  'ISO-8859-1',
  'ISO-8859-2',
  'ISO-8859-9',
  'windows-1250',
  'windows-1252',
  'windows-1254',
  'windows-1257',
]);

/** chardet's confidence (0–100) below which its pick among Latin encodings is a coin toss. */
const CONFIDENT = 50;

function chardetMatches(sample: Buffer): Match[] {
  try {
    return loadDetectors()
      .analyse(sample)
      .filter((match) => match.confidence > 0);
  } catch {
    return [];
  }
}

/**
 * jschardet's names of the Latin encodings above → chardet's. Its letter statistics tell them apart
 * where chardet's do not: on the labelled corpus it names Polish, Czech, Turkish and Lithuanian
 * samples right that chardet leaves unsure (bench/README.md, legacy encodings).
 */
const JSCHARDET_LATIN: ReadonlyMap<string, string> = new Map([
  ['iso-8859-1', 'windows-1252'],
  ['iso-8859-2', 'ISO-8859-2'],
  ['iso-8859-9', 'windows-1254'],
  ['windows-1250', 'windows-1250'],
  ['windows-1252', 'windows-1252'],
  ['windows-1254', 'windows-1254'],
  ['windows-1257', 'windows-1257'],
]);

/** A candidate encoding under chardet's name, with chardet's confidence (0–100). */
interface Guess {
  name: string;
  confidence: number;
}

function jschardetLatin(sample: Buffer): string | undefined {
  try {
    return JSCHARDET_LATIN.get(loadDetectors().jschardet.detect(sample).encoding?.toLowerCase() ?? '');
  } catch {
    return undefined;
  }
}

function rankedGuesses(sample: Buffer): Guess[] {
  const matches: Guess[] = chardetMatches(sample);
  // When chardet is unsure among Latin encodings, jschardet's Latin pick decides; failing that,
  // windows-1252, by far the most common of them (a short file has too few accented letters for
  // statistics: chardet scores `café crème brûlée` as Polish).
  const top = matches[0];
  if (top && LATIN_SINGLE_BYTE.has(top.name) && top.confidence < CONFIDENT)
    matches.unshift({ name: jschardetLatin(sample) ?? 'windows-1252', confidence: top.confidence });
  return matches;
}

/**
 * What a Japanese decode shows when the file is not Windows-31J: codes it cannot map (U+FFFD), or
 * its user-defined rows (private use), where JIS X 0213 puts its second plane.
 */
const OUTSIDE_WINDOWS_31J = /[\ufffd\ue000-\uf8ff]/;

/** Decodes non-UTF-8 text without NUL bytes that looks like text. */
export function decodeLegacy(bytes: Buffer): LegacyText {
  const sample = bytes.subarray(0, SAMPLE_UNITS);
  for (const guess of rankedGuesses(sample)) {
    const entry = DECODERS.get(guess.name);
    if (!entry) continue;
    const [encoding, decode] = entry;
    const head = decode(sample);
    const sure = guess.confidence >= SURE && MULTI_BYTE.has(guess.name);
    if (!sure && !fewReplacements(head)) continue;
    let text = sample.length === bytes.length ? head : decode(bytes);
    if ((encoding === 'Shift_JIS' || encoding === 'EUC-JP') && OUTSIDE_WINDOWS_31J.test(text))
      text = decode(withoutVendorCodes(bytes, encoding));
    return { text, encoding, replacements: countReplacementChars(text) };
  }
  // windows-1252 maps every byte, so text is never dropped.
  return { text: decodeWindows1252(bytes), encoding: 'windows-1252', replacements: 0 };
}
