export { walkTree, walkTreeInto, WalkTimeoutError, type WalkInput, type WalkSink } from './walk-tree.js';
export type { WalkDeps, WalkDirent, WalkFolder, WalkStats } from './walk-deps.js';
export { nodeWalkFs } from './node-walk-fs.js';
export { DEFAULT_EXCLUDED_DIRS, VIRTUALENV_MARKER } from './default-excludes.js';
export { ScanRootError, type ScanRootErrorCode } from './scan-root.js';
export type { GitWorkTree } from './git-work-tree.js';
