// Worker-thread entry of the TokenPool. Plain ESM JavaScript: Node 20 cannot run a .ts file in a worker,
// and this file is loaded as is both from src/ (vitest) and from dist/ (the build copies it).
//
// Protocol: it posts `{ ready: true }` once its counter is ready (over the pool's shared tables), then answers every batch (an
// array of UTF-8 Uint8Arrays, usually views of SharedArrayBuffers) with `{ counts }` or `{ error }`;
// the pool sends a worker one batch at a time.
import { Buffer } from 'node:buffer';
import process from 'node:process';
import { parentPort, workerData } from 'node:worker_threads';
import { lowerThreadPriority } from '../io/background-priority.js';
import { createBpeCounter } from './bpe-engine.js';
import { wasmCounter } from './bpe-wasm.js';

/** @type {{ tables: import('./bpe-engine.js').BpeTables, exitOnText?: string }} */
const { tables, exitOnText } = workerData;
const port = parentPort;
if (port === null) throw new Error('count-tokens.worker.js must run in a worker thread');

// Counting is background work: the process's event loop gets the CPU first when both want it.
lowerThreadPriority();

// The pool's tables, built once in shared memory; the compiled counter where this Node runs it.
const { countUtf8 } = wasmCounter(tables) ?? createBpeCounter(tables);

port.on('message', (/** @type {Uint8Array[]} */ contents) => {
  try {
    const counts = new Array(contents.length);
    for (let i = 0; i < contents.length; i++) {
      // Test seam (TokenPoolOptions.exitOnTextForTest): die mid-batch like a crashed worker would.
      if (exitOnText !== undefined && Buffer.from(contents[i]).toString() === exitOnText) process.exit(70);
      counts[i] = countUtf8(contents[i]);
    }
    port.postMessage({ counts });
  } catch (error) {
    port.postMessage({ error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  }
});
port.postMessage({ ready: true });
