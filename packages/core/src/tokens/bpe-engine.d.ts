// Types for bpe-engine.js (plain JavaScript so that worker threads can load it without a TS loader).
import type { TokenEncodingName } from '../types.js';

/** The part of a shared `WebAssembly.Memory` used here (the project's lib has no DOM types to name it). */
export interface TableMemory {
  readonly buffer: SharedArrayBuffer;
  /** Adds pages; returns the size before, in pages. */
  grow(pages: number): number;
}

/** One encoding's vocabulary in typed arrays; immutable once built. */
export interface BpeTables {
  /** The pre-tokenizer pattern (js-tiktoken's `pat_str`). */
  readonly pattern: string;
  /** Every token's bytes, back to back. */
  readonly bytes: Uint8Array;
  /** Offset of each rank's bytes in `bytes`. */
  readonly start: Int32Array;
  /** Byte length of each rank (0 for an unused rank). */
  readonly length: Uint16Array;
  /** Open-addressing hash table of rank + 1 (0 = empty), FNV-1a over the token bytes. */
  readonly slots: Int32Array;
  readonly mask: number;
  /** Rank of every two-byte token, indexed by `first << 8 | second`. */
  readonly pairRank: Int32Array;
  readonly maxTokenBytes: number;
  /**
   * Every token of 2 to 8 bytes, in slots of four words: its bytes packed little-endian into two,
   * its length (0 = empty slot) and its rank; open addressing over `shortMask + 1` slots.
   */
  readonly shortSlots: Int32Array;
  readonly shortMask: number;
  /** Bit `shortHash >>> 11` set for every token of `shortSlots`: a pair whose bit is clear is no token. */
  readonly shortFilter: Int32Array;
  /** Class bits of every BMP character for the compiled pre-tokenizer (empty for an unknown pattern). */
  readonly classes: Uint8Array;
  /** The shared WebAssembly memory all of the above live in, or null (then a SharedArrayBuffer). */
  readonly memory: TableMemory | null;
  /** Byte offset of each table in that memory. */
  readonly offsets: Readonly<Record<'bytes' | 'start' | 'length' | 'slots' | 'pairRank' | 'shortSlots' | 'shortFilter' | 'classes', number>>;
}

/** Most pages a table memory may grow to (the tables plus every compiled counter's region). */
export const TABLE_MEMORY_MAX_PAGES: number;

/** 1 for o200k_base's pattern, 2 for cl100k_base's, 0 for any other (counted by the pattern alone). */
export function patternFlavour(pattern: string): number;

export function loadBpeTables(encoding: TokenEncodingName): BpeTables;

/** Tables of any vocabulary in js-tiktoken's format (`pat_str`, `bpe_ranks`); loadBpeTables keeps the two encodings'. */
export function buildBpeTables(pattern: string, bpeRanks: string): BpeTables;

/**
 * `count` of createBpeCounter. `smallPieceBytes` (the longest piece the linear scan merges) and
 * `passes` (false: no pass or sweep that merges a whole rank at once and no windows, only tiktoken's
 * loop and the heap or tree) let tests compare the ways of merging.
 */
export function createBpeCount(tables: BpeTables, smallPieceBytes?: number, passes?: boolean): (text: string) => number;

/**
 * How pieces longer than a window are counted: window by window (bpe-wasm.js gives the compiled
 * counter's merge; tests give small windows to the JavaScript one).
 */
export interface WindowMerger {
  /** The longest window; longer pieces are counted in windows of this size (8 kB unless given). */
  readonly windowBytes: number;
  /**
   * Merges `bytes` (at most windowBytes), writes where each token starts into `out` in order, returns
   * how many; it also merges the pieces between the linear scan's and a window. Without it, the
   * JavaScript merge (mergeLong).
   */
  readonly mergeWindow?: (bytes: Uint8Array, out: Int32Array) => number;
}

/**
 * `count` of a string, and `countUtf8` of UTF-8 bytes (equal to `countUtf8(count, bytes)`, with ASCII
 * text found and counted on the bytes), over one merge cache and one set of scratch buffers.
 * `scansAsciiBytes` is false for a pattern the byte scanner does not know (everything then goes
 * through the regular expression).
 */
export function createBpeCounter(
  tables: BpeTables,
  smallPieceBytes?: number,
  /** Merge cache entries, a power of two (about 100 bytes each; 32 768 unless given). */
  cacheEntries?: number,
  passes?: boolean,
  windows?: WindowMerger,
): {
  count: (text: string) => number;
  countUtf8: (bytes: Uint8Array) => number;
  scansAsciiBytes: boolean;
  /** Tokens of one pre-tokenizer piece, its UTF-8 bytes `src[from, to)`. */
  countPiece: (src: Uint8Array, from: number, to: number) => number;
  /** Tokens of `src[from, to)` through the pattern: from a piece's start to where both patterns always end one. */
  countStretch: (src: Uint8Array, from: number, to: number) => number;
};

/**
 * The token count of UTF-8 `bytes`, equal to `count(decoded bytes)`, decoding at most about
 * `sliceBytes` at a time (split only where both encodings' pre-tokenizers always split).
 */
export function countUtf8(count: (text: string) => number, bytes: Uint8Array, sliceBytes?: number): number;

/** `bytes` cut at piece boundaries into parts of about `partBytes`: their counts add up to the count of the whole. */
export function splitUtf8(bytes: Uint8Array, partBytes: number): Uint8Array[];
