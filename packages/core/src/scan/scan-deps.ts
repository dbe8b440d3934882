import { classifyByName, classifyContent, isDocsPath } from '../classify/index.js';
import { readFileBytes } from '../io/read-file-bytes.js';
import { walkTree } from '../walk/index.js';

/** The engine's I/O and heavy helpers, injectable for tests; the defaults are the real ones. */
export const defaultScanDeps = {
  walk: walkTree,
  readFile: readFileBytes,
  classifyByName,
  classifyContent,
  isDocsPath,
  now: (): Date => new Date(),
};

export type ScanDeps = typeof defaultScanDeps;
