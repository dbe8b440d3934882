// Which kind of asset a binary file is, from its magic number, for files whose name said nothing
// (or said text). Only formats with an unambiguous signature; everything else is `binary`.
import type { AssetSubcategory } from '../types.js';

/** [offset, signature as Latin-1 characters, subcategory]. */
const SIGNATURES: readonly (readonly [number, string, AssetSubcategory])[] = [
  [0, '%PDF-', 'pdf'],
  [0, '\x89PNG\r\n\x1a\n', 'image'],
  [0, '\xff\xd8\xff', 'image'], // JPEG
  [0, 'GIF8', 'image'],
  [0, 'II*\x00', 'image'], // TIFF, little-endian
  [0, 'MM\x00*', 'image'], // TIFF, big-endian
  [8, 'WEBP', 'image'], // RIFF container
  [8, 'WAVE', 'audio'], // RIFF container
  [8, 'AVI ', 'video'], // RIFF container
  [0, 'ID3', 'audio'], // MP3 with ID3 tag
  [0, 'fLaC', 'audio'],
  [0, 'OggS', 'audio'],
  [0, 'MThd', 'audio'], // MIDI
  [0, '\x1a\x45\xdf\xa3', 'video'], // Matroska, WebM
];

/** ISO base media (`ftyp` box) brands that are still images or sound rather than video. */
const FTYP_BRANDS: ReadonlyMap<string, AssetSubcategory> = new Map([
  ['avif', 'image'],
  ['heic', 'image'],
  ['heix', 'image'],
  ['mif1', 'image'],
  ['M4A ', 'audio'],
]);

function hasAt(bytes: Uint8Array, offset: number, signature: string): boolean {
  if (bytes.length < offset + signature.length) return false;
  for (let i = 0; i < signature.length; i++) if (bytes[offset + i] !== signature.charCodeAt(i)) return false;
  return true;
}

export function sniffAssetSubcategory(bytes: Uint8Array): AssetSubcategory {
  for (const [offset, signature, subcategory] of SIGNATURES) {
    if (offset === 8 && !hasAt(bytes, 0, 'RIFF')) continue;
    if (hasAt(bytes, offset, signature)) return subcategory;
  }
  if (hasAt(bytes, 4, 'ftyp')) {
    const brand = String.fromCharCode(...bytes.subarray(8, 12));
    return FTYP_BRANDS.get(brand) ?? 'video';
  }
  return 'binary';
}
