import { Buffer } from 'node:buffer';

// Seeded random file contents for differential tests (a carried or reused scan against a fresh
// one): the same seed gives the same trees and changes, so a failure names its seed.

export type Rng = () => number;

/** mulberry32. */
export function seededRandom(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const pick = <T>(rng: Rng, items: readonly T[]): T => items[Math.floor(rng() * items.length)] as T;

const WORDS = [
  'const',
  'value',
  'return',
  'naïve',
  '日本語',
  '🙂',
  'x',
  '"quoted"',
  'back\\slash',
  '```',
  '<tag>',
  '\t',
  '$1',
];

/**
 * Contents of every kind a scan tells apart: plain text, CRLF, empty, a secret, a fenced block,
 * UTF-16 with a BOM, Latin-1, a binary, and a long first line (over a small size limit).
 */
export function randomContent(rng: Rng): Buffer {
  const lines = Array.from({ length: 1 + Math.floor(rng() * 12) }, () =>
    Array.from({ length: 1 + Math.floor(rng() * 8) }, () => pick(rng, WORDS)).join(' '),
  );
  const text = lines.join('\n') + (rng() < 0.7 ? '\n' : '');
  switch (pick(rng, ['plain', 'plain', 'crlf', 'empty', 'secret', 'fence', 'utf16', 'latin1', 'binary', 'long'])) {
    case 'crlf':
      return Buffer.from(text.replaceAll('\n', '\r\n'));
    case 'empty':
      return Buffer.alloc(0);
    case 'secret':
      // An AWS key id's shape (not a real one), one of three: a change may keep or swap it.
      return Buffer.from(`${text}const key = "AKIAIOSFODNN7EXAMP${pick(rng, ['LQ', 'LR', 'LS'])}";\n`);
    case 'fence':
      return Buffer.from(`\`\`\`\`ts\n${text}\`\`\`\`\n`);
    case 'utf16':
      return Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
    case 'latin1':
      return Buffer.from(`caf\xe9 ${text}`, 'latin1');
    case 'binary':
      return Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 1, 2, 3, 0, 4]);
    case 'long':
      return Buffer.from(`${'abc '.repeat(5000)}\n${text}`);
    default:
      return Buffer.from(text);
  }
}
