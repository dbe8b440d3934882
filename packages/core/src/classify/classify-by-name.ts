// What a file's name says about it, from fixed tables only, so every host gives the same answer.
import type { AssetSubcategory, TextSubcategory } from '../types.js';
import { BINARY_EXTENSIONS } from './binary-extensions.js';
import { LINGUIST_EXTENSIONS, LINGUIST_FILENAMES } from './language-table.generated.js';
import {
  FALLBACK_NAME_RULES,
  LEADING_NAME_RULES,
  TEMPLATE_SUFFIXES,
  TEXT_EXTENSIONS,
  TEXT_FILENAMES,
} from './text-names.js';

export type NameClassification =
  | { kind: 'asset'; subcategory: AssetSubcategory }
  | { kind: 'text'; subcategory: TextSubcategory }
  | { kind: 'unknown' };

function toMap(groups: Readonly<Partial<Record<TextSubcategory, readonly string[]>>>): Map<string, TextSubcategory> {
  const map = new Map<string, TextSubcategory>();
  for (const [subcategory, names] of Object.entries(groups) as [TextSubcategory, readonly string[]][]) {
    for (const name of names) map.set(name, subcategory);
  }
  return map;
}

const LINGUIST_EXTENSION_MAP = toMap(LINGUIST_EXTENSIONS);
const LINGUIST_FILENAME_MAP = toMap(LINGUIST_FILENAMES);

function matchRules(name: string, rules: typeof LEADING_NAME_RULES): TextSubcategory | undefined {
  for (const [pattern, subcategory] of rules) if (pattern.test(name)) return subcategory;
  return undefined;
}

/**
 * Order: exact names, then whole-name patterns, then extensions longest first (`.d.ts` before
 * `.ts`, `.blade.php` before `.php`; a leading dot is part of the name, not an
 * extension), then fallback patterns, then the name without a template suffix.
 */
function classifyLowerName(name: string): NameClassification {
  const whole = TEXT_FILENAMES.get(name) ?? LINGUIST_FILENAME_MAP.get(name) ?? matchRules(name, LEADING_NAME_RULES);
  if (whole) return { kind: 'text', subcategory: whole };
  for (let dot = name.indexOf('.', 1); dot !== -1; dot = name.indexOf('.', dot + 1)) {
    const ext = name.slice(dot);
    const asset = BINARY_EXTENSIONS.get(ext);
    if (asset) return { kind: 'asset', subcategory: asset };
    const text = TEXT_EXTENSIONS.get(ext) ?? LINGUIST_EXTENSION_MAP.get(ext);
    if (text) return { kind: 'text', subcategory: text };
  }
  const fallback = matchRules(name, FALLBACK_NAME_RULES);
  if (fallback) return { kind: 'text', subcategory: fallback };
  const suffix = TEMPLATE_SUFFIXES.find((s) => name.endsWith(s) && name.length > s.length);
  return suffix ? classifyLowerName(name.slice(0, -suffix.length)) : { kind: 'unknown' };
}

/** What the name alone says. Decides whether a file must be read at all. */
export function classifyByName(relPath: string): NameClassification {
  return classifyLowerName(relPath.slice(relPath.lastIndexOf('/') + 1).toLowerCase());
}

/** True when the name alone makes the file `docs` (used for docs_only before reading). */
export function isDocsPath(relPath: string): boolean {
  const byName = classifyByName(relPath);
  return byName.kind === 'text' && byName.subcategory === 'docs';
}
