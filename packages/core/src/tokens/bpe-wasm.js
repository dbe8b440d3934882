// The compiled counter (packages/core/assembly/bpe-count.ts), over the tables bpe-engine.js built in
// a shared WebAssembly memory. Plain ESM JavaScript for the same reason as bpe-engine.js: worker
// threads load it as is from src/ and from dist/. Types are in bpe-wasm.d.ts.
//
// Each counter owns a region of the tables' memory (its input, caches and scratch, about 2 MB),
// taken by growing the memory once: one counter per encoding per thread, kept for the thread's life.
// What the compiled code reports as exceptions (a stretch with a character beyond the Basic
// Multilingual Plane or bytes that are not UTF-8, a piece longer than it merges) is counted by the
// JavaScript counter, which is created only when the first one comes and merges the windows of long
// pieces back here.
/* global WebAssembly */
import { Buffer } from 'node:buffer';
import { BPE_COUNT_WASM } from './bpe-count-wasm.js';
import { createBpeCounter, patternFlavour, splitUtf8 } from './bpe-engine.js';

/** @type {WeakMap<import('./bpe-engine.js').BpeTables, { countUtf8: (bytes: Uint8Array) => number, windows: import('./bpe-engine.js').WindowMerger } | null>} */
const counters = new WeakMap();
/** The JavaScript counter behind a compiled one sees only its exceptions: small caches do (about 100 kB). */
const FALLBACK_CACHE_ENTRIES = 1 << 10;

/** Ranks the compiled counter tells apart. */
const MAX_RANKS = 1 << 19;

/** @type {object | undefined} the compiled module, once per thread */
let compiled;

/**
 * This thread's compiled counter over `tables`, or null where it cannot run (no WebAssembly, tables
 * in plain shared memory, a pattern the compiled pre-tokenizer does not know, or a memory that
 * cannot grow by another region). Not re-entrant, like every counter: one thread, one call at a time.
 * @param {import('./bpe-engine.js').BpeTables} tables
 * @returns {{ countUtf8: (bytes: Uint8Array) => number, windows: import('./bpe-engine.js').WindowMerger } | null}
 */
export function wasmCounter(tables) {
  let counter = counters.get(tables);
  if (counter === undefined) {
    counter = createWasmCounter(tables);
    counters.set(tables, counter);
  }
  return counter;
}

/**
 * @param {import('./bpe-engine.js').BpeTables} tables
 * @returns {{ countUtf8: (bytes: Uint8Array) => number, windows: import('./bpe-engine.js').WindowMerger } | null}
 */
function createWasmCounter(tables) {
  const flavour = patternFlavour(tables.pattern);
  const { memory, offsets } = tables;
  // The compiled merge keys a pair by its rank in 19 bits (o200k_base has 200 k ranks).
  if (memory === null || flavour === 0 || tables.start.length > MAX_RANKS) return null;
  let instance;
  try {
    compiled ??= new WebAssembly.Module(Buffer.from(BPE_COUNT_WASM, 'base64'));
    instance = new WebAssembly.Instance(compiled, { env: { memory, abort: () => {} } });
  } catch {
    return null;
  }
  /** @type {any} */
  const wasm = instance.exports;
  wasm.init(
    flavour,
    offsets.bytes,
    offsets.start,
    offsets.length,
    offsets.slots,
    tables.mask,
    offsets.pairRank,
    offsets.shortSlots,
    tables.shortMask,
    offsets.shortFilter,
    offsets.classes,
    tables.maxTokenBytes,
  );
  const regionBytes = wasm.REGION_BYTES.value;
  let region;
  try {
    // Growing returns the old size: the new pages are this counter's alone, and zeroed.
    region = memory.grow(Math.ceil(regionBytes / 65536)) * 65536;
  } catch {
    return null;
  }
  const inputAt = wasm.bind(region);
  const inputBytes = wasm.INPUT_BYTES.value;
  // Views made after the growth, over this region only.
  const input = new Uint8Array(memory.buffer, inputAt, inputBytes);
  const exceptions = new Int32Array(memory.buffer, wasm.exceptions(), wasm.EXCEPTION_SLOTS.value * 2);
  // Windows of long pieces (and pieces the pattern finds in exceptions) merge here, in their own area.
  const windowBytes = wasm.MAX_PIECE.value;
  const window = new Uint8Array(memory.buffer, wasm.windowAt(), windowBytes);
  const starts = new Int32Array(memory.buffer, wasm.startsAt(), windowBytes);
  /** @type {import('./bpe-engine.js').WindowMerger} */
  const windows = {
    windowBytes,
    mergeWindow(bytes, out) {
      window.set(bytes);
      const parts = wasm.mergeWindow(bytes.length);
      out.set(starts.subarray(0, parts));
      return parts;
    },
  };
  /** @type {ReturnType<typeof createBpeCounter> | undefined} */
  let fallback;
  const javascript = () => (fallback ??= createBpeCounter(tables, undefined, FALLBACK_CACHE_ENTRIES, true, windows));

  /** Tokens of `part` (at most inputBytes long, starting and ending where pieces do). */
  function countPart(part) {
    const n = part.length;
    input.set(part);
    const text = input.subarray(0, n);
    let total = 0;
    for (let from = 0; from < n; from = wasm.resumeAt.value) {
      total += wasm.count(from, n);
      const listed = wasm.exceptionCount.value;
      for (let i = 0; i < listed; i++) {
        const at = exceptions[2 * i];
        const to = exceptions[2 * i + 1];
        total += to < 0 ? javascript().countStretch(text, at, -to) : javascript().countPiece(text, at, to);
      }
    }
    return total;
  }

  return {
    windows,
    countUtf8(bytes) {
      if (bytes.length <= inputBytes) return countPart(bytes);
      let total = 0;
      for (const part of splitUtf8(bytes, inputBytes >> 1)) {
        if (part.length <= inputBytes) total += countPart(part);
        else total += javascript().countUtf8(part);
      }
      return total;
    },
  };
}
