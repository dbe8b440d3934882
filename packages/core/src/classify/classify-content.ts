// The verdict after one read: textual (with its UTF-8 content) or an asset. The name decides the
// subcategory when it knows one; the bytes decide whether the file is text at all. A name that
// says text names no kind of asset, so binary bytes under it are `binary`: an MPEG transport
// stream saved as `.ts` (TypeScript to Linguist) is not sniffed into `video`, nor an HLS segment
// that starts with an ID3 tag into `audio`. Only a name that says nothing lets the magic number
// pick image, audio, video or pdf.
import type { AssetSubcategory, TextSubcategory } from '../types.js';
import { classifyByName } from './classify-by-name.js';
import { decodeText } from './decode-text.js';
import { sniffAssetSubcategory } from './sniff-asset.js';

export type ContentClassification =
  | {
      textual: true;
      subcategory: TextSubcategory;
      content: Uint8Array /* UTF-8 */;
      encoding: string | null; /* null = UTF-8 */
      /** Undecodable sequences, now U+FFFD. */
      replacements: number;
    }
  | { textual: false; subcategory: AssetSubcategory };

/** `#!` at the start, after an optional UTF-8 BOM. */
function hasShebang(content: Uint8Array): boolean {
  const at = content[0] === 0xef && content[1] === 0xbb && content[2] === 0xbf ? 3 : 0;
  return content[at] === 0x23 && content[at + 1] === 0x21;
}

/** Classify from the bytes of one read and bring text to UTF-8. Never throws. */
export function classifyContent(relPath: string, bytes: Uint8Array): ContentClassification {
  const byName = classifyByName(relPath);
  if (byName.kind === 'asset') return { textual: false, subcategory: byName.subcategory };
  const decoded = decodeText(bytes);
  if (!decoded)
    return { textual: false, subcategory: byName.kind === 'text' ? 'binary' : sniffAssetSubcategory(bytes) };
  const { content, encoding, replacements } = decoded;
  // An unnamed file with a shebang (`bin/deploy`) is a script.
  const subcategory = byName.kind === 'text' ? byName.subcategory : hasShebang(content) ? 'code' : 'other';
  return { textual: true, subcategory, content, encoding, replacements };
}
