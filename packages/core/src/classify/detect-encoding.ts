// Text that is neither valid UTF-8 nor marked by a BOM: a legacy encoding (Latin-1, Shift_JIS,
// GBK, KOI8-R, …). Peers call such files binary and drop them; we decode them. chardet ranks the
// candidates from a bounded sample, and the first one that decodes the sample (almost) cleanly wins.
import type { Buffer } from 'node:buffer';
import { analyse } from 'chardet';
import type { Match } from 'chardet';
import { bytesLookLikeText, SAMPLE_UNITS } from './looks-like-text.js';
import { decodeWindows1252 } from './windows-1252.js';

export interface LegacyText {
  text: string;
  /** The encoding decoded from, as reported in outputs (`Shift_JIS`, `windows-1252`, …). */
  encoding: string;
}

/** Decodes every byte (undecodable ones become U+FFFD); null when this Node cannot decode it. */
type Decode = (bytes: Buffer) => string | null;

function whatwgDecoder(label: string): Decode {
  return (bytes) => {
    try {
      return new TextDecoder(label).decode(bytes);
    } catch {
      // A Node built without full ICU knows only a few encodings: try the next guess.
      return null;
    }
  };
}

/**
 * chardet's names → [name reported in outputs, decoder]. ISO-8859-1 and ISO-8859-9 decode as
 * their windows-125x supersets, as browsers do, and are reported under the name actually used.
 * A `UTF-8` guess means UTF-8 with a few broken bytes: they become U+FFFD, and the encoding is
 * reported as `UTF-8` (not null) because the text is no longer byte-exact.
 */
const DECODERS: ReadonlyMap<string, readonly [encoding: string, decode: Decode]> = new Map([
  ['UTF-8', ['UTF-8', (bytes: Buffer) => bytes.toString('utf8')]],
  ['ISO-8859-1', ['windows-1252', decodeWindows1252]],
  ['windows-1252', ['windows-1252', decodeWindows1252]],
  ['ISO-8859-9', ['windows-1254', whatwgDecoder('windows-1254')]],
  ...[
    'Big5',
    'EUC-JP',
    'EUC-KR',
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
  ].map((name) => [name, [name, whatwgDecoder(name)]] as const),
]);

/**
 * A right guess decodes nearly everything: allow one bad character per thousand (plus one for a
 * character cut at the sample's end), so one stray byte does not turn a whole file into mojibake.
 */
function fewReplacements(text: string): boolean {
  const allowed = 1 + text.length / 1000;
  let count = 0;
  for (let i = text.indexOf('\ufffd'); i !== -1; i = text.indexOf('\ufffd', i + 1)) {
    if (++count > allowed) return false;
  }
  return true;
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

function rankedGuesses(sample: Buffer): string[] {
  const matches = chardetMatches(sample);
  const guesses = matches.map((match) => match.name);
  // A short file has too few accented letters for statistics (`café crème brûlée` scores as
  // Polish): unless chardet is sure, prefer windows-1252, by far the most common of them.
  const top = matches[0];
  if (top && LATIN_SINGLE_BYTE.has(top.name) && top.confidence < CONFIDENT) guesses.unshift('windows-1252');
  return guesses;
}

/** Decodes non-UTF-8 text without NUL bytes; null when the bytes do not look like text. */
export function decodeLegacy(bytes: Buffer): LegacyText | null {
  const sample = bytes.subarray(0, SAMPLE_UNITS);
  // Cheap and encoding-independent, and it keeps chardet away from binary data.
  if (!bytesLookLikeText(sample)) return null;
  for (const guess of rankedGuesses(sample)) {
    const entry = DECODERS.get(guess);
    if (!entry) continue;
    const [encoding, decode] = entry;
    const head = decode(sample);
    if (head === null || !fewReplacements(head)) continue;
    const text = sample.length === bytes.length ? head : decode(bytes);
    if (text !== null) return { text, encoding };
  }
  // windows-1252 maps every byte, so text is never dropped.
  return { text: decodeWindows1252(bytes), encoding: 'windows-1252' };
}
