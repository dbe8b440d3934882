// Thread entry of the TokenPool (token-pool.ts): a counter over the pool's tables, built once in
// shared memory, answering one batch (UTF-8 contents, usually views of SharedArrayBuffers) at a
// time with its counts in order.
import { Buffer } from 'node:buffer';
import process from 'node:process';
import { lowerThreadPriority } from '../io/background-priority.js';
import { serveThread, threadData } from '../threads/serve-thread.js';
import { createBpeCounter } from './bpe-engine.js';
import type { BpeTables } from './bpe-engine.js';
import { wasmCounter } from './bpe-wasm.js';

export interface CountTokensThreadData {
  tables: BpeTables;
  /** Test seam (TokenPoolOptions.exitOnTextForTest). */
  exitOnText?: string | undefined;
}

const { tables, exitOnText } = threadData<CountTokensThreadData>();
// Background work from the start: building the counter (compiling it) takes CPU too.
lowerThreadPriority();

// The compiled counter where this Node runs it.
const { countUtf8 } = wasmCounter(tables) ?? createBpeCounter(tables);

serveThread((contents: Uint8Array[]) => {
  const counts = new Array<number>(contents.length);
  for (let i = 0; i < contents.length; i++) {
    const content = contents[i] as Uint8Array;
    // Die mid-batch like a crashed worker would.
    if (exitOnText !== undefined && Buffer.from(content).toString() === exitOnText) process.exit(70);
    counts[i] = countUtf8(content);
  }
  return counts;
});
