// Classification and decoding: what a file is (textual or an asset, and its subcategory) from its
// name and, once read, its bytes. Deterministic: fixed tables, no OS mime lookups.
export { classifyByName, isDocsPath } from './classify-by-name.js';
export type { NameClassification } from './classify-by-name.js';
export { classifyContent } from './classify-content.js';
export type { ContentClassification } from './classify-content.js';
