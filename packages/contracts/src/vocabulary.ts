// The words the engine, the API, the command line and the configuration share, each written
// once. Plain data with no dependencies, so the engine and its threads load it as cheaply as the
// HTTP layer: `@reposcan/contracts/vocabulary` is this module, without zod.

/** BPE encodings the token counts can use (js-tiktoken's rank files of the same names). */
export const TOKEN_ENCODINGS = ['o200k_base', 'cl100k_base'] as const;
export type TokenEncodingName = (typeof TOKEN_ENCODINGS)[number];
export const DEFAULT_TOKEN_ENCODING: TokenEncodingName = 'o200k_base';

export const TEXT_SUBCATEGORIES = ['code', 'docs', 'config', 'data', 'other'] as const;
export const ASSET_SUBCATEGORIES = ['image', 'audio', 'video', 'pdf', 'binary'] as const;
export type TextSubcategory = (typeof TEXT_SUBCATEGORIES)[number];
export type AssetSubcategory = (typeof ASSET_SUBCATEGORIES)[number];
export type Subcategory = TextSubcategory | AssetSubcategory;

/** Why a path was left out, each with what it means to a reader of `skipped` (null: the name says it). */
export const SKIP_REASON_MEANINGS = {
  excluded_dir: 'a default or requested excluded folder',
  ignored: 'a `.gitignore` or `.gittxtignore` rule',
  pattern: 'include/exclude patterns, `docs_only`',
  too_large: 'over the per-file limit',
  symlink: 'a link, never followed nor read',
  unreadable: null,
  limit: 'past the file or depth limit',
  submodule: 'a git submodule of a remote repository, never fetched',
} as const;
export type SkipReason = keyof typeof SKIP_REASON_MEANINGS;
export const SKIP_REASONS = Object.keys(SKIP_REASON_MEANINGS) as [SkipReason, ...SkipReason[]];

/** What a scan can produce, in output order: the three digests, then the bundle. */
export const ARTIFACT_FORMATS = ['txt', 'md', 'json', 'zip'] as const;
export type ArtifactFormatName = (typeof ARTIFACT_FORMATS)[number];
/** The digests a renderer writes; the zip bundle is assembled from them. */
export type TextFormat = Exclude<ArtifactFormatName, 'zip'>;

/**
 * Part `part` of `parts` as file names write it (`01`, `007`): zero-padded to the width of the
 * last part's number, at least 2, so the names of one output sort in part order in a listing.
 */
export function partNumberText(part: number, parts: number): string {
  return String(part).padStart(Math.max(2, String(parts).length), '0');
}

/** `a`, `a or b`, `a, b or c`: a closed list in a sentence. */
export function orList(words: readonly string[]): string {
  return words.length <= 1 ? words.join('') : `${words.slice(0, -1).join(', ')} or ${words.at(-1)}`;
}

export * from './scan-option-table.js';
