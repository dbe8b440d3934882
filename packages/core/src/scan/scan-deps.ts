import { classifyByName, classifyContent } from '../classify/index.js';
import type { IoThreads } from '../io/io-threads.js';
import type { ReadOutcome, ReadRequest } from '../io/read-file-bytes.js';
import type { SkippedPath } from '../types.js';
import type { WalkInput, WalkSink } from '../walk/walk-tree.js';

/** The engine's I/O and heavy helpers, injectable for tests. */
export interface ScanDeps {
  walk: (input: WalkInput, sink: WalkSink, signal?: AbortSignal) => Promise<SkippedPath[]>;
  readFiles: (requests: readonly ReadRequest[], maxBytes: number) => Promise<ReadOutcome[]>;
  /** A preview's token estimates (inspect), off the caller's thread. */
  estimateTokens: (contents: Uint8Array[]) => Promise<number[]> | number[];
  classifyByName: typeof classifyByName;
  classifyContent: typeof classifyContent;
  now: () => Date;
}

/** The deps that walk and read on `io`'s threads, so the caller's event loop never waits on the disk. */
export function threadScanDeps(io: IoThreads): ScanDeps {
  return {
    walk: io.walk,
    readFiles: io.readFiles,
    estimateTokens: io.estimate,
    classifyByName,
    classifyContent,
    now: () => new Date(),
  };
}
