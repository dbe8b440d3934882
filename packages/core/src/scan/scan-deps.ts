import { classifyByName, classifyContent } from '../classify/index.js';
import { asPromise } from '../io/as-promise.js';
import { assembleInThread, readFilesInThread, walkInThread, warmFileThreads } from '../io/io-threads.js';
import { readFilesSync } from '../io/read-file-bytes.js';

/**
 * The engine's I/O and heavy helpers, injectable for tests. The defaults walk and read on the
 * io threads, so the caller's event loop never waits on the disk.
 */
export const defaultScanDeps = {
  walk: walkInThread,
  readFiles: readFilesInThread,
  assemble: assembleInThread,
  /** Called as a scan starts: whatever `assemble` needs is ready when the last file is counted. */
  prepareAssemble: warmFileThreads,
  classifyByName,
  classifyContent,
  now: (): Date => new Date(),
};

export type ScanDeps = typeof defaultScanDeps;

/**
 * For a caller that is itself a worker thread with nothing else to serve (inspect): blocking reads
 * right there, and the walk on a thread of its own, so reading overlaps the walk.
 */
export const blockingIoDeps: Pick<ScanDeps, 'walk' | 'readFiles'> = {
  walk: walkInThread,
  readFiles: (requests, maxBytes) => asPromise(() => readFilesSync(requests, maxBytes)),
};
