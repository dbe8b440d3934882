// The verdict after one read: textual (with its decoded text) or an asset. The name decides the
// subcategory when it knows one; the bytes decide whether the file is text at all.
import type { AssetSubcategory, TextSubcategory } from '../types.js';
import { classifyByName } from './classify-by-name.js';
import { decodeText } from './decode-text.js';
import { sniffAssetSubcategory } from './sniff-asset.js';

export type ContentClassification =
  | { textual: true; subcategory: TextSubcategory; text: string; encoding: string | null /* null = UTF-8 */ }
  | { textual: false; subcategory: AssetSubcategory };

/** Classify from the bytes of one read and decode text to a JS string. Never throws. */
export function classifyContent(relPath: string, bytes: Uint8Array): ContentClassification {
  const byName = classifyByName(relPath);
  if (byName.kind === 'asset') return { textual: false, subcategory: byName.subcategory };
  const decoded = decodeText(bytes);
  if (!decoded) return { textual: false, subcategory: sniffAssetSubcategory(bytes) };
  const { text, encoding } = decoded;
  // An unnamed file with a shebang (`bin/deploy`) is a script.
  const subcategory = byName.kind === 'text' ? byName.subcategory : /^\ufeff?#!/.test(text) ? 'code' : 'other';
  return { textual: true, subcategory, text, encoding };
}
