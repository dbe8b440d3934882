// The compiled counter (packages/core/assembly/bpe-count.ts), over the tables bpe-engine built in
// a shared WebAssembly memory.
//
// Each counter owns a region of the tables' memory (its input, caches and scratch, about 2 MB),
// taken by growing the memory once: one counter per encoding per thread, kept for the thread's life.
// What the compiled code reports as exceptions (a stretch with a character beyond the Basic
// Multilingual Plane or bytes that are not UTF-8, a piece longer than it merges) is counted by the
// JavaScript counter, which is created only when the first one comes and merges the windows of long
// pieces back here.
import { Buffer } from 'node:buffer';
import { BPE_COUNT_WASM } from './bpe-count-wasm.js';
import { createBpeCounter, patternFlavour, splitUtf8 } from './bpe-engine.js';
import type { BpeTables, TableMemory, WindowMerger } from './bpe-engine.js';

/** A compiled counter: `countUtf8` equals the JavaScript counter's exactly; `windows` is its merge. */
export interface WasmCounter {
  countUtf8: (bytes: Uint8Array) => number;
  /** For a JavaScript counter of strings on the same thread (createBpeCounter's last argument). */
  windows: WindowMerger;
}

/** A global of the module (`WebAssembly.Global`). */
interface WasmGlobal {
  readonly value: number;
}

/** What bpe-count.ts exports. */
interface BpeCountExports {
  readonly MAX_PIECE: WasmGlobal;
  readonly EXCEPTION_SLOTS: WasmGlobal;
  readonly INPUT_BYTES: WasmGlobal;
  readonly REGION_BYTES: WasmGlobal;
  readonly resumeAt: WasmGlobal;
  readonly exceptionCount: WasmGlobal;
  init(
    ...args: [
      flavour: number,
      bytes: number,
      start: number,
      length: number,
      slots: number,
      mask: number,
      pairRank: number,
      shortSlots: number,
      shortMask: number,
      shortFilter: number,
      classes: number,
      maxTokenBytes: number,
    ]
  ): void;
  bind(at: number): number;
  exceptions(): number;
  mergeWindow(n: number): number;
  windowAt(): number;
  startsAt(): number;
  count(from: number, n: number): number;
}

/** The part of the WebAssembly API used here (the project's lib has no DOM types to name it). */
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: { env: { memory: TableMemory; abort: () => void } }) => { exports: object };
}

const counters = new WeakMap<BpeTables, WasmCounter | null>();
/** Ranks the compiled counter tells apart. */
const MAX_RANKS = 1 << 19;

/** The compiled module, once per thread. */
let compiled: object | undefined;

/**
 * This thread's compiled counter over `tables` (one per tables object, kept), or null where it cannot
 * run (no WebAssembly, tables in plain shared memory, a pattern the compiled pre-tokenizer does not
 * know, or a memory that cannot grow by another region). Not re-entrant, like every counter: one
 * thread, one call at a time.
 */
export function wasmCounter(tables: BpeTables): WasmCounter | null {
  let counter = counters.get(tables);
  if (counter === undefined) {
    counter = createWasmCounter(tables);
    counters.set(tables, counter);
  }
  return counter;
}

function createWasmCounter(tables: BpeTables): WasmCounter | null {
  const flavour = patternFlavour(tables.pattern);
  const { memory, offsets } = tables;
  const api = (globalThis as unknown as { WebAssembly?: WasmApi }).WebAssembly;
  // The compiled merge keys a pair by its rank in 19 bits (o200k_base has 200 k ranks).
  if (api === undefined || memory === null || flavour === 0 || tables.start.length > MAX_RANKS) return null;
  let wasm: BpeCountExports;
  try {
    compiled ??= new api.Module(Buffer.from(BPE_COUNT_WASM, 'base64'));
    wasm = new api.Instance(compiled, { env: { memory, abort: () => {} } }).exports as BpeCountExports;
  } catch {
    return null;
  }
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
  let region: number;
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
  const windows: WindowMerger = {
    windowBytes,
    mergeWindow(bytes, out) {
      window.set(bytes);
      const parts = wasm.mergeWindow(bytes.length);
      out.set(starts.subarray(0, parts));
      return parts;
    },
  };
  let fallback: ReturnType<typeof createBpeCounter> | undefined;
  const javascript = (): ReturnType<typeof createBpeCounter> => (fallback ??= createBpeCounter(tables, { windows }));

  /** Tokens of `part` (at most inputBytes long, starting and ending where pieces do). */
  function countPart(part: Uint8Array): number {
    const n = part.length;
    input.set(part);
    const text = input.subarray(0, n);
    let total = 0;
    for (let from = 0; from < n; from = wasm.resumeAt.value) {
      total += wasm.count(from, n);
      const listed = wasm.exceptionCount.value;
      for (let i = 0; i < listed; i++) {
        const at = exceptions[2 * i] as number;
        const to = exceptions[2 * i + 1] as number;
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
        else total += javascript().countUncut(part);
      }
      return total;
    },
  };
}
