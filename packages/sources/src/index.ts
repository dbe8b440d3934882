// Where a scan's files come from. Each source is its own folder: remote (hardened git),
// local (allowed roots), archive (safe ZIP extraction).
export * from './remote/index.js';
export * from './local/index.js';
export * from './archive/index.js';
