// Types for bpe-wasm.js (plain JavaScript so that worker threads can load it without a TS loader).
import type { BpeTables, WindowMerger } from './bpe-engine.js';

/**
 * This thread's compiled counter over `tables` (one per tables object, kept), or null where it cannot
 * run: no WebAssembly, tables outside a WebAssembly memory, an unknown pattern, or no room to grow.
 * `countUtf8` equals the JavaScript counter's exactly. `windows` is its merge, for a JavaScript
 * counter of strings on the same thread (createBpeCounter's last argument).
 */
export function wasmCounter(tables: BpeTables): { countUtf8: (bytes: Uint8Array) => number; windows: WindowMerger } | null;
