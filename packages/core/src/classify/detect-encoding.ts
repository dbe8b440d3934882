// Text that is neither valid UTF-8 nor marked by a BOM: a legacy encoding (Latin-1, Shift_JIS,
// GBK, KOI8-R, …). Peers call such files binary and drop them; we decode them. chardet ranks the
// candidates from a bounded sample, and the first one that decodes the sample (almost) cleanly wins.
import type { Buffer } from 'node:buffer';
import { analyse } from 'chardet';
import type { Match } from 'chardet';
import iconv from 'iconv-lite';
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

/** Decodes every byte; undecodable sequences become U+FFFD. */
type Decode = (bytes: Buffer) => string;

/**
 * iconv-lite decodes the same on every Node build: Node's TextDecoder leans on ICU, which decodes
 * `big5` without HKSCS (as private-use characters) and `euc-kr` without the windows-949
 * extension (0x81 0x41 `갂` came out as `A`), and a Node without full ICU has neither.
 */
function iconvDecoder(name: string): Decode {
  return (bytes) => iconv.decode(bytes, name);
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
  ...[
    'EUC-JP',
    'GB18030',
    'ISO-8859-2',
    'ISO-8859-5',
    'ISO-8859-6',
    'ISO-8859-7',
    'ISO-8859-8',
    'KOI8-R',
    'Shift_JIS',
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
    return analyse(sample).filter((match) => match.confidence > 0);
  } catch {
    return [];
  }
}

function rankedGuesses(sample: Buffer): Match[] {
  const matches = chardetMatches(sample);
  // A short file has too few accented letters for statistics (`café crème brûlée` scores as
  // Polish): unless chardet is sure, prefer windows-1252, by far the most common of them.
  const top = matches[0];
  if (top && LATIN_SINGLE_BYTE.has(top.name) && top.confidence < CONFIDENT)
    matches.unshift({ name: 'windows-1252', confidence: top.confidence });
  return matches;
}

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
    const text = sample.length === bytes.length ? head : decode(bytes);
    return { text, encoding, replacements: countReplacementChars(text) };
  }
  // windows-1252 maps every byte, so text is never dropped.
  return { text: decodeWindows1252(bytes), encoding: 'windows-1252', replacements: 0 };
}
