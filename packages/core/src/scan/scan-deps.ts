import { classifyByName, classifyContent } from '../classify/index.js';
import { estimateInThread, readFilesInThread, walkInThread } from '../io/io-threads.js';

/**
 * The engine's I/O and heavy helpers, injectable for tests. The defaults walk and read on the
 * io threads, so the caller's event loop never waits on the disk.
 */
export const defaultScanDeps = {
  walk: walkInThread,
  readFiles: readFilesInThread,
  /** A preview's token estimates (inspect), off the caller's thread. */
  estimateTokens: estimateInThread as (contents: Uint8Array[]) => Promise<number[]> | number[],
  classifyByName,
  classifyContent,
  now: (): Date => new Date(),
};

export type ScanDeps = typeof defaultScanDeps;

