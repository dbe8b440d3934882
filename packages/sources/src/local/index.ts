export { resolveLocalRoot, type LocalRoot } from './resolve-local-root.js';
export { readGitHead } from './read-git-head.js';
export { isWithin } from './is-within.js';
export { readWorkTree, type LocalWorkTree } from './read-work-tree.js';
export { missingLocalRootsWarning } from './missing-local-roots.js';
