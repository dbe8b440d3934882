// Exact tiktoken BPE *counting* (never encoding): the rank tables, built once per process in shared
// memory for every counter, and the JavaScript counter.
//
// Why not an npm tokenizer as is (scripts/measure-tokenizers.mjs has the numbers): js-tiktoken is slow,
// gpt-tokenizer and ai-tokenizer spend most of their time decoding byte pairs back into strings and
// collapse once their LRU merge caches are full, ai-tokenizer miscounts `toString`/`valueOf`/… (its
// vocabulary is a plain object), tiktoken WASM is slower still, and every one of them merges a piece
// in O(n²), so a 13 k-emoji string in a test file takes seconds. This engine uses js-tiktoken's rank
// files, splits text as tiktoken's own pre-tokenizer does (its patterns with the character classes of
// tiktoken's regex crate, unicode-classes.ts), and counts with the same rule as tiktoken (merge the
// adjacent pair with the lowest rank, leftmost first), on bytes held in typed arrays: about 5 MB of
// tables for o200k_base, O(n log n) on long pieces. Special tokens are never looked for, so
// `<|endoftext|>` is ordinary text.
//
// Scans count with the compiled counter (bpe-wasm.ts over assembly/bpe-count.ts), which reads these
// tables in place. The JavaScript counter below is the plain fallback: it counts what the compiled
// one hands back (stretches with characters beyond the Basic Multilingual Plane or bytes that are
// not UTF-8, pieces longer than it merges) and everything on a Node without WebAssembly
// (`--jitless`). It splits text with the pattern itself and merges each piece as tiktoken does.
import { Buffer, isUtf8 } from 'node:buffer';
import { createRequire } from 'node:module';
import type { TokenEncodingName } from '../types.js';
import { readTableSnapshot, snapshotPath } from './bpe-table-snapshot.js';
import { LETTER, LOWER_OR_MARK, NUMBER, UPPER_OR_MARK, WHITE_SPACE } from './unicode-classes.js';

/** The part of a shared `WebAssembly.Memory` used here (the project's lib has no DOM types to name it). */
export interface TableMemory {
  readonly buffer: SharedArrayBuffer;
  /** Adds pages; returns the size before, in pages. */
  grow(pages: number): number;
}

export const TABLE_NAMES = [
  'bytes',
  'start',
  'length',
  'slots',
  'pairRank',
  'shortSlots',
  'shortFilter',
  'classes',
] as const;
export type TableName = (typeof TABLE_NAMES)[number];

/** One encoding's vocabulary in typed arrays; immutable once built. */
export interface BpeTables {
  /** The pre-tokenizer pattern (js-tiktoken's `pat_str`). */
  readonly pattern: string;
  /** How the JavaScript counter splits text. */
  readonly split: SplitPattern;
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
  readonly offsets: Readonly<Record<TableName, number>>;
}

/**
 * How pieces longer than a window are counted: window by window (bpe-wasm.ts gives the compiled
 * counter's merge; tests give small windows to the JavaScript one).
 */
export interface WindowMerger {
  /** The longest window; longer pieces are counted in windows of this size (8 kB unless given). */
  readonly windowBytes: number;
  /**
   * Merges `bytes` (at most windowBytes), writes where each token starts into `out` in order, returns
   * how many; it also merges the pieces between the linear loop's and a window. Without it, the
   * JavaScript merge (mergeTree).
   */
  readonly mergeWindow?: (bytes: Uint8Array, out: Int32Array) => number;
}

/** The counting functions of createBpeCounter, over one set of scratch buffers. */
export interface BpeCounter {
  count: (text: string) => number;
  /** Equal to `count(decoded bytes)`, decoding at most about 64 kB at a time (countUtf8). */
  countUtf8: (bytes: Uint8Array) => number;
  /** Tokens of one pre-tokenizer piece, its UTF-8 bytes `src[from, to)`. */
  countPiece: (src: Uint8Array, from: number, to: number) => number;
  /** Tokens of `src[from, to)` through the pattern: from a piece's start to where both patterns always end one. */
  countStretch: (src: Uint8Array, from: number, to: number) => number;
  /**
   * Equal to `countUtf8(bytes)` for bytes that splitUtf8 found no place to cut (a run of one piece,
   * most often): decoded whole without looking for a cut again, and where the bytes are UTF-8 each
   * piece merges on them in place instead of on a copy encoded back.
   */
  countUncut: (bytes: Uint8Array) => number;
}

/** How createBpeCounter merges; the defaults are what scans use, the others let tests compare the ways of merging. */
export interface BpeCounterOptions {
  /** Pieces up to this many bytes merge with tiktoken's own loop (quadratic); longer ones in the tree. */
  smallPieceBytes?: number;
  /** False: long pieces merge whole in the tree, never in windows. */
  windowed?: boolean;
  /** The window size, and the compiled counter's merge for windows and pieces above smallPieceBytes. */
  windows?: WindowMerger;
}

/** The part of the WebAssembly API used here (the project's lib has no DOM types to name it). */
interface WasmMemoryApi {
  Memory: new (descriptor: { initial: number; maximum: number; shared: boolean }) => TableMemory;
}

const require = createRequire(import.meta.url);

// js-tiktoken ships each encoding's ranks as `js-tiktoken/ranks/<name>`. Which names are offered
// is decided once, in the contracts' vocabulary (TOKEN_ENCODINGS); a plain name is all this needs.
const RANK_MODULE_PREFIX = 'js-tiktoken/ranks/';

/** Pieces up to this many UTF-8 bytes merge with tiktoken's loop (a linear min-scan per merge, so
 * quadratic); longer ones in a tournament tree (mergeTree), O(n log n), and beyond a window's length
 * window by window (countWindows). */
const SMALL_PIECE_BYTES = 64;
/** UTF-8 buffer reused for pieces up to a third of this many chars; longer pieces get their own. */
const SCRATCH_BYTES = 1 << 16;
/** The compiled counter looks tokens of up to this many bytes up packed into two 32-bit words. */
const SHORT_BYTES = 8;
/** A bit for each hash of a short token (its top bits; the table's slot is its low bits), 256 kB:
 * the compiled merge checks it before the table, which most pairs it looks up are not in. */
const SHORT_FILTER_LOG2 = 21;
const SHORT_FILTER_BITS = 1 << SHORT_FILTER_LOG2;
const NO_RANK = 0x7fffffff;
/** The longest token of either encoding, in bytes: a text of n bytes is at least n / 128 tokens. */
export const LONGEST_TOKEN_BYTES = 128;
/** Pieces longer than this many bytes are counted in windows of this size (countWindows)... */
const WINDOW_BYTES = 8192;
/** ...that overlap by at least this many bytes, far more than any token (LONGEST_TOKEN_BYTES). */
const OVERLAP_BYTES = 512;
const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

const loaded = new Map<string, BpeTables>();

/** This module, whose code the tables are built by: a table snapshot's fingerprint covers it. */
export const BPE_ENGINE_URL = import.meta.url;

/**
 * The rank tables of one encoding, built once per process on first use. They live in shared memory:
 * the tokenizer threads get them through workerData instead of each loading the 3 MB rank module and
 * building its own (about 10 MB and 0.1 s of CPU a thread).
 */
export function loadBpeTables(encoding: TokenEncodingName): BpeTables {
  let tables = loaded.get(encoding);
  if (tables === undefined) {
    const resolved = resolveRankModule(encoding);
    tables = readTableSnapshot(snapshotPath(encoding), BPE_ENGINE_URL, resolved) ?? buildFromRankModule(resolved);
    loaded.set(encoding, tables);
  }
  return tables;
}

/** buildBpeTables over one of js-tiktoken's rank modules (a path from resolveRankModule). */
export function buildFromRankModule(resolved: string): BpeTables {
  const ranks = require(resolved) as { pat_str: string; bpe_ranks: string };
  const tables = buildBpeTables(ranks.pat_str, ranks.bpe_ranks);
  // The tables hold all of it now: let the module's megabytes of base64 be collected.
  delete require.cache[resolved];
  return tables;
}

export function resolveRankModule(encoding: string): string {
  // A plain name only: never a path into another package.
  if (/^[a-z0-9_]+$/.test(encoding)) {
    try {
      return require.resolve(RANK_MODULE_PREFIX + encoding);
    } catch {
      // not an encoding js-tiktoken has
    }
  }
  throw new Error(`Unknown token encoding: ${encoding}`);
}

/** Most pages a table memory may grow to: the tables plus every counter's region (bpe-wasm.ts). */
export const TABLE_MEMORY_MAX_PAGES = 16384;

/**
 * One shared block holding every table, so they cross to worker threads without a copy. Where this
 * Node has WebAssembly the block is a shared WebAssembly memory, which the compiled counter
 * (bpe-wasm.ts) reads in place and grows by a region per counter; elsewhere a SharedArrayBuffer.
 */
export function allocateTables(layout: ReadonlyArray<readonly [TableName, number]>): {
  memory: TableMemory | null;
  buffer: SharedArrayBuffer;
  offsets: Record<TableName, number>;
} {
  const offsets = {} as Record<TableName, number>;
  let size = 0;
  for (const [name, bytes] of layout) {
    size = (size + 15) & ~15;
    offsets[name] = size;
    size += bytes;
  }
  const pages = Math.ceil(size / 65536);
  const api = (globalThis as unknown as { WebAssembly?: WasmMemoryApi }).WebAssembly;
  let memory: TableMemory | null = null;
  try {
    memory =
      api === undefined ? null : new api.Memory({ initial: pages, maximum: TABLE_MEMORY_MAX_PAGES, shared: true });
  } catch {
    // No shared WebAssembly memory here (e.g. a Node without WebAssembly threads): plain shared memory.
  }
  const buffer = memory === null ? new SharedArrayBuffer(pages * 65536) : memory.buffer;
  return { memory, buffer, offsets };
}

/**
 * Decodes js-tiktoken's rank format (lines of `! <first rank> <base64 token> …`) into one byte array
 * plus per-rank offsets, and indexes it with an open-addressing hash table (FNV-1a over the bytes).
 * It reads the base64 in place rather than splitting 200 k substrings out of it, which keeps the
 * transient heap, and so each worker's RSS, small.
 */
export function buildBpeTables(pattern: string, bpeRanks: string): BpeTables {
  // Token runs: first rank, base64 span.
  const runs: Array<{ first: number; from: number; to: number }> = [];
  let rankCount = 0;
  for (let at = 0; at < bpeRanks.length;) {
    let end = bpeRanks.indexOf('\n', at);
    if (end === -1) end = bpeRanks.length;
    const afterBang = bpeRanks.indexOf(' ', at) + 1;
    const afterFirst = bpeRanks.indexOf(' ', afterBang) + 1;
    if (afterBang > 0 && afterFirst > 0 && afterFirst <= end) {
      const first = Number.parseInt(bpeRanks.slice(afterBang, afterFirst - 1), 10);
      let tokens = 1;
      for (let i = bpeRanks.indexOf(' ', afterFirst); i !== -1 && i < end; i = bpeRanks.indexOf(' ', i + 1)) tokens++;
      runs.push({ first, from: afterFirst, to: end });
      rankCount = Math.max(rankCount, first + tokens);
    }
    at = end + 1;
  }

  const sextet = new Int8Array(128).fill(-1);
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  for (let i = 0; i < 64; i++) sextet[alphabet.charCodeAt(i)] = i;

  const bytes = new Uint8Array(Math.ceil((bpeRanks.length * 3) / 4));
  const start = new Int32Array(rankCount);
  const length = new Uint16Array(rankCount);
  let size = 1;
  while (size < rankCount * 2) size <<= 1;
  const slots = new Int32Array(size);
  const mask = size - 1;
  const pairRank = new Int32Array(65536).fill(NO_RANK);
  let used = 0;
  let maxTokenBytes = 1;

  for (const { first, from, to } of runs) {
    let rank = first;
    let begin = used;
    let acc = 0;
    let bits = 0;
    for (let i = from; i <= to; i++) {
      const c = i < to ? bpeRanks.charCodeAt(i) : 32;
      if (c !== 32) {
        const v = sextet[c & 127]!;
        if (v >= 0) {
          acc = ((acc << 6) | v) & 0xffffff;
          bits += 6;
          if (bits >= 8) {
            bits -= 8;
            bytes[used++] = (acc >> bits) & 0xff;
          }
        }
        continue;
      }
      // A space ends one token: index its bytes under the next rank.
      const n = used - begin;
      start[rank] = begin;
      length[rank] = n;
      if (n > maxTokenBytes) maxTokenBytes = n;
      if (n === 2) pairRank[(bytes[begin]! << 8) | bytes[begin + 1]!] = rank;
      let slot = fnv(bytes, begin, used) & mask;
      while (slots[slot] !== 0) slot = (slot + 1) & mask;
      slots[slot] = rank + 1;
      rank++;
      begin = used;
      acc = 0;
      bits = 0;
    }
  }
  const { shortSlots, shortMask, shortFilter } = buildShortTable(bytes, start, length);
  const flavour = patternFlavour(pattern);
  const classes = flavour === 0 ? new Uint8Array(0) : buildCharClasses();

  const { memory, buffer, offsets } = allocateTables([
    ['bytes', used],
    ['start', start.byteLength],
    ['length', length.byteLength],
    ['slots', slots.byteLength],
    ['pairRank', pairRank.byteLength],
    ['shortSlots', shortSlots.byteLength],
    ['shortFilter', shortFilter.byteLength],
    ['classes', classes.byteLength],
  ]);
  const placeBytes = (name: TableName, from: Uint8Array): Uint8Array => {
    const to = new Uint8Array(buffer, offsets[name], from.length);
    to.set(from);
    return to;
  };
  const placeInts = (name: TableName, from: Int32Array): Int32Array => {
    const to = new Int32Array(buffer, offsets[name], from.length);
    to.set(from);
    return to;
  };
  const placedLength = new Uint16Array(buffer, offsets.length, length.length);
  placedLength.set(length);
  return {
    pattern,
    split: splitPattern(pattern),
    bytes: placeBytes('bytes', bytes.subarray(0, used)),
    start: placeInts('start', start),
    length: placedLength,
    slots: placeInts('slots', slots),
    mask,
    pairRank: placeInts('pairRank', pairRank),
    maxTokenBytes,
    shortSlots: placeInts('shortSlots', shortSlots),
    shortMask,
    shortFilter: placeInts('shortFilter', shortFilter),
    classes: placeBytes('classes', classes),
    memory,
    offsets,
  };
}

/** FNV-1a of buf[from, to): the key of the rank table. */
function fnv(buf: Uint8Array, from: number, to: number): number {
  let h = FNV_OFFSET;
  for (let i = from; i < to; i++) h = Math.imul(h ^ buf[i]!, FNV_PRIME);
  return h;
}

// Class bits of a character, as the two patterns tell characters apart (bpe-count.ts reads them).
const CLASS_UPPER = 1; // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
const CLASS_LOWER = 2; // [\p{Ll}\p{Lm}\p{Lo}\p{M}]
const CLASS_LETTER = 4; // \p{L}
const CLASS_NUMBER = 8; // \p{N}
const CLASS_SPACE = 16; // \s (White_Space)
const CLASS_NEWLINE = 32; // [\r\n]

/**
 * The class bits of every character of the Basic Multilingual Plane for the compiled pre-tokenizer,
 * from tiktoken's classes (unicode-classes.ts), which the JavaScript counter's patterns follow too.
 * Surrogates get none: they are not UTF-8.
 */
function buildCharClasses(): Uint8Array {
  const classes = new Uint8Array(65536);
  const sets: Array<[string, number]> = [
    [UPPER_OR_MARK, CLASS_UPPER],
    [LOWER_OR_MARK, CLASS_LOWER],
    [LETTER, CLASS_LETTER],
    [NUMBER, CLASS_NUMBER],
    [WHITE_SPACE, CLASS_SPACE],
    ['a d', CLASS_NEWLINE],
  ];
  for (const [set, bit] of sets)
    for (const [first, last] of codePointRanges(set))
      for (let c = first; c <= Math.min(last, 0xffff); c++) classes[c] = classes[c]! | bit;
  classes.fill(0, 0xd800, 0xe000);
  return classes;
}

/** A class of unicode-classes.ts as [first, last] pairs. */
function codePointRanges(set: string): Array<[number, number]> {
  return set.split(' ').map((range): [number, number] => {
    const [first, last] = range.split('-').map((hex) => Number.parseInt(hex, 16));
    return [first!, last ?? first!];
  });
}

/**
 * For the compiled counter: every token of 2 to SHORT_BYTES bytes in an open-addressing table of
 * 16-byte slots (the token's bytes packed little-endian into two words, its length and its rank;
 * length 0 = empty slot), and a bit filter over their hashes. bpe-count.ts hashes alike.
 */
function buildShortTable(
  bytes: Uint8Array,
  start: Int32Array,
  length: Uint16Array,
): { shortSlots: Int32Array; shortMask: number; shortFilter: Int32Array } {
  let tokens = 0;
  for (const n of length) if (n >= 2 && n <= SHORT_BYTES) tokens++;
  // At most 60 % full: a hit takes about 1.7 probes.
  let size = 1;
  while (size * 0.6 < tokens) size <<= 1;
  const shortSlots = new Int32Array(size * 4);
  const shortMask = size - 1;
  const shortFilter = new Int32Array(SHORT_FILTER_BITS >> 5);
  for (let rank = 0; rank < length.length; rank++) {
    const n = length[rank]!;
    if (n < 2 || n > SHORT_BYTES) continue;
    const from = start[rank]!;
    // Bytes 0-3 and 4-7, little-endian (0 where the token is shorter).
    let lo = 0;
    let hi = 0;
    for (let i = 0; i < n; i++) {
      if (i < 4) lo |= bytes[from + i]! << (8 * i);
      else hi |= bytes[from + i]! << (8 * (i - 4));
    }
    // murmur3's finaliser mixes the two words and the length.
    let h = Math.imul(lo ^ (n << 28), 0x9e3779b1) ^ Math.imul(hi, 0x85ebca77);
    h = Math.imul(h ^ (h >>> 15), 0xc2b2ae3d);
    h ^= h >>> 13;
    let slot = h & shortMask;
    while (shortSlots[(slot << 2) + 2] !== 0) slot = (slot + 1) & shortMask;
    shortSlots.set([lo, hi, n, rank], slot << 2);
    const bit = h >>> (32 - SHORT_FILTER_LOG2);
    shortFilter[bit >> 5] = shortFilter[bit >> 5]! | (1 << (bit & 31));
  }
  return { shortSlots, shortMask, shortFilter };
}

/** `count` of createBpeCounter (see there). */
export function createBpeCount(tables: BpeTables, options: BpeCounterOptions = {}): (text: string) => number {
  return createBpeCounter(tables, options).count;
}

/**
 * The JavaScript counter over one encoding's tables. Not re-entrant (it owns scratch buffers), so
 * one per thread or per counter.
 */
export function createBpeCounter(tables: BpeTables, options: BpeCounterOptions = {}): BpeCounter {
  const { bytes, start, length, slots, mask, maxTokenBytes } = tables;
  const { smallPieceBytes = SMALL_PIECE_BYTES, windowed = true, windows } = options;
  const { split } = tables;
  const sticky = new RegExp(split.source, 'uy');
  const global = new RegExp(split.source, 'ug');
  const differing = split.differing === '' ? null : new RegExp(`[${split.differing}]`, 'u');
  const standIns = split.standIns.map(([set, bmp, astral]) => ({ set: new RegExp(`[${set}]`, 'gu'), bmp, astral }));
  /** `text` with the code points the engine classes unlike tiktoken replaced by their stand-ins. */
  const retyped = (text: string): string => {
    if (differing === null || !differing.test(text)) return text;
    for (const { set, bmp, astral } of standIns) text = text.replace(set, (c) => (c.length === 1 ? bmp : astral));
    return text;
  };
  const encoder = new TextEncoder();
  const scratch = new Uint8Array(SCRATCH_BYTES);
  // tiktoken's loop: where each part starts (bounds[parts] = n), and the rank of each part with the next.
  const bounds = new Int32Array(smallPieceBytes + 2);
  const ranks = new Int32Array(smallPieceBytes + 2);
  const windowBytes = windows?.windowBytes ?? WINDOW_BYTES;
  const overlap = Math.min(OVERLAP_BYTES, windowBytes >> 2);
  const mergeWindow =
    windows?.mergeWindow ?? ((piece: Uint8Array, out: Int32Array): number => mergeTree(piece, piece.length, out));
  // countWindows' token starts of two windows side by side, made on first use.
  let windowStarts: Int32Array | undefined;
  let nextStarts: Int32Array | undefined;

  /** Rank of buf[from, to), or NO_RANK. */
  function rankOf(buf: Uint8Array, from: number, to: number): number {
    const n = to - from;
    if (n > maxTokenBytes) return NO_RANK;
    for (let slot = fnv(buf, from, to) & mask; ; slot = (slot + 1) & mask) {
      const entry = slots[slot]!;
      if (entry === 0) return NO_RANK;
      const rank = entry - 1;
      if (length[rank] === n) {
        const at = start[rank]!;
        let k = 0;
        while (k < n && bytes[at + k] === buf[from + k]) k++;
        if (k === n) return rank;
      }
    }
  }

  /** Parts left after merging buf[0, n) with tiktoken's loop: merge the pair of lowest rank, leftmost first. */
  function mergeSmall(buf: Uint8Array, n: number): number {
    for (let i = 0; i <= n; i++) bounds[i] = i;
    for (let i = 0; i < n - 1; i++) ranks[i] = rankOf(buf, i, i + 2);
    for (let parts = n; ; parts--) {
      let min = NO_RANK;
      let at = -1;
      for (let i = 0; i < parts - 1; i++) {
        if (ranks[i]! < min) {
          min = ranks[i]!;
          at = i;
        }
      }
      if (at < 0) return parts;
      // Part at + 1 joins part at.
      bounds.copyWithin(at + 1, at + 2, parts + 1);
      ranks.copyWithin(at, at + 1, parts - 1);
      if (at < parts - 2) ranks[at] = rankOf(buf, bounds[at]!, bounds[at + 2]!);
      if (at > 0) ranks[at - 1] = rankOf(buf, bounds[at - 1]!, bounds[at + 1]!);
    }
  }

  /**
   * Parts left after merging buf[0, n) in tiktoken's order, in O(n log n): a tournament tree whose
   * every node holds the least key below it, the key of a part being its pair's rank, then its place
   * (so the leftmost of equal ranks comes first). Part p starts at byte p, since a merge keeps the
   * left part's start; a linked list holds the parts left. With `out`, where each part left starts,
   * in order.
   */
  function mergeTree(buf: Uint8Array, n: number, out?: Int32Array): number {
    let leaves = 1;
    while (leaves < n) leaves <<= 1;
    const tree = new Float64Array(2 * leaves).fill(Infinity);
    const next = new Int32Array(n);
    const prev = new Int32Array(n);
    const keyOf = (p: number, end: number): number => {
      const rank = rankOf(buf, p, end);
      return rank === NO_RANK ? Infinity : rank * leaves + p;
    };
    for (let p = 0; p < n; p++) {
      next[p] = p + 1;
      prev[p] = p - 1;
      if (p < n - 1) tree[leaves + p] = keyOf(p, p + 2);
    }
    for (let node = leaves - 1; node >= 1; node--) tree[node] = Math.min(tree[2 * node]!, tree[2 * node + 1]!);
    /** Leaf p to `key`, and the minima above it up to the first that stays. */
    const set = (p: number, key: number): void => {
      let node = leaves + p;
      tree[node] = key;
      while (node > 1) {
        const least = Math.min(key, tree[node ^ 1]!);
        node >>= 1;
        if (tree[node] === least) break;
        tree[node] = least;
        key = least;
      }
    };
    let parts = n;
    for (let key = tree[1]!; key !== Infinity; key = tree[1]!) {
      // Part q joins part p.
      const p = key % leaves;
      const q = next[p]!;
      const after = next[q]!;
      next[p] = after;
      if (after < n) prev[after] = p;
      parts--;
      set(q, Infinity);
      set(p, after < n ? keyOf(p, next[after]!) : Infinity);
      if (p > 0) {
        const before = prev[p]!;
        set(before, keyOf(before, after));
      }
    }
    if (out !== undefined) for (let p = 0, i = 0; p < n; p = next[p]!) out[i++] = p;
    return parts;
  }

  /**
   * Tokens of buf[0, n), a piece longer than a window, merged window by window: windows of
   * windowBytes that overlap by about OVERLAP_BYTES, each merged on its own, the whole in a few
   * kilobytes of memory and cache. Where the tokens of two texts that overlap share one token (the
   * same bytes at the same place), the tokens of their union are the first text's up to that token
   * and the second's after it: a merge that would differ must cross a border of the shared token or
   * a border the two texts agree on, and tiktoken's order, the lowest rank first, would then have
   * made it in one of the two texts alone. So from the first window on, each next window is glued to
   * what is counted so far at a token that both it and the window before have; in the overlap,
   * away from both windows' ends, their tokens nearly always agree. Where no token is shared (a
   * text made so that a change at one end moves every token), the whole piece goes through
   * mergeTree, O(n log n) still. A window starts where a token of the one before starts, so that
   * both cut a run of one character alike.
   */
  function countWindows(buf: Uint8Array, n: number): number {
    // Where each token of the current window and of the next starts, from the window's start.
    let starts = (windowStarts ??= new Int32Array(windowBytes));
    let next = (nextStarts ??= new Int32Array(windowBytes));
    let s = 0;
    let e = windowBytes;
    let parts = mergeWindow(buf.subarray(s, e), starts);
    // Tokens of the current window before token `from` are counted (it starts where the last shared one ended).
    let from = 0;
    let total = 0;
    while (e < n) {
      let shared = -1;
      let j = 0;
      let s2 = 0;
      let e2 = 0;
      let parts2 = 0;
      // The next window overlaps this one by `overlap`, else (no token shared) by half a window.
      for (const reach of [overlap, windowBytes >> 1]) {
        let k = from;
        while (k < parts && s + starts[k]! < e - reach) k++;
        // No token starts there, or the same as before: no wider overlap to try.
        if (k === parts || starts[k] === 0 || s + starts[k]! === s2) continue;
        s2 = s + starts[k]!;
        e2 = Math.min(n, s2 + windowBytes);
        parts2 = mergeWindow(buf.subarray(s2, e2), next);
        // The first token both windows have, at or after token `from`.
        let i = k;
        j = 0;
        while (i < parts && j < parts2) {
          const a = s + starts[i]!;
          const b = s2 + next[j]!;
          if (a < b) i++;
          else if (b < a) j++;
          else if ((i + 1 < parts ? s + starts[i + 1]! : e) === (j + 1 < parts2 ? s2 + next[j + 1]! : e2)) {
            shared = i;
            break;
          } else {
            i++;
            j++;
          }
        }
        if (shared >= 0) break;
      }
      if (shared < 0) return mergeTree(buf, n);
      total += shared - from + 1;
      from = j + 1;
      [starts, next] = [next, starts];
      s = s2;
      e = e2;
      parts = parts2;
    }
    return total + parts - from;
  }

  /** Tokens in src[from, to), one piece's UTF-8 bytes. */
  function countPiece(src: Uint8Array, from: number, to: number): number {
    const n = to - from;
    if (n <= 1) return n;
    const piece = src.subarray(from, to);
    if (rankOf(piece, 0, n) !== NO_RANK) return 1;
    if (n <= smallPieceBytes) return mergeSmall(piece, n);
    if (windowed && n > windowBytes) return countWindows(piece, n);
    return windows?.mergeWindow === undefined
      ? mergeTree(piece, n)
      : windows.mergeWindow(piece, (windowStarts ??= new Int32Array(windowBytes)));
  }

  function count(text: string): number {
    let total = 0;
    let from = 0;
    // Pieces are found in the copy and cut from the text: stand-ins have the same length.
    const matched = retyped(text);
    while (from < text.length) {
      sticky.lastIndex = from;
      if (sticky.test(matched)) {
        const to = sticky.lastIndex;
        // UTF-8 as TextEncoder writes it (a lone surrogate becomes U+FFFD), as tiktoken gets a string.
        const piece = text.slice(from, to);
        const buf = piece.length * 3 <= scratch.length ? scratch : new Uint8Array(piece.length * 3);
        total += countPiece(buf, 0, encoder.encodeInto(piece, buf).written);
        from = to;
      } else {
        // The patterns match every code point, so this never runs; if one day it does, skip the
        // unmatched characters exactly as js-tiktoken's matchAll would.
        global.lastIndex = from;
        const match = global.exec(matched);
        if (match === null) break;
        from = match.index;
      }
    }
    return total;
  }

  function countUncut(src: Uint8Array): number {
    if (isOneAsciiPiece(src)) return countPiece(src, 0, src.length);
    const buffer = Buffer.from(src.buffer, src.byteOffset, src.byteLength);
    const text = buffer.toString('utf8');
    // Bytes that are not UTF-8 count as the text they decode to.
    if (!isUtf8(buffer)) return count(text);
    const matched = retyped(text);
    let total = 0;
    let at = 0;
    for (let from = 0; from < text.length;) {
      sticky.lastIndex = from;
      // The patterns match every code point (see count).
      if (!sticky.test(matched)) return total + count(text.slice(from));
      const to = sticky.lastIndex;
      const n = from === 0 && to === text.length ? src.length : Buffer.byteLength(text.slice(from, to));
      total += countPiece(src, at, at + n);
      at += n;
      from = to;
    }
    return total;
  }

  return {
    count,
    countUncut,
    countUtf8: (src) => countUtf8(count, src),
    countPiece,
    countStretch: (src, from, to) => countUtf8(count, src.subarray(from, to)),
  };
}

// The two patterns the compiled pre-tokenizer knows, as js-tiktoken ships them; any other pattern is
// counted by the JavaScript counter alone.
const CONTRACTIONS = "('s|'S|'t|'T|'re|'rE|'Re|'RE|'ve|'vE|'Ve|'VE|'m|'M|'ll|'lL|'Ll|'LL|'d|'D)";
const O200K_PATTERN =
  `[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+${CONTRACTIONS}?` +
  `|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*${CONTRACTIONS}?` +
  '|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+';
const CL100K_PATTERN = `${CONTRACTIONS}|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+`;
const O200K = 1;
const CL100K = 2;

/**
 * How the JavaScript counter splits text: the pattern, and the code points this engine's `\s` and
 * `\p{…}` class unlike tiktoken's regex crate, each with a stand-in of the same length that the
 * engine classes as tiktoken classes the code point. JavaScript's `\s` has U+FEFF and lacks U+0085,
 * and the engine's Unicode may be older or newer than the crate's (unicode-classes.ts). Patterns
 * with those classes spelled out instead run several times slower in V8 and overflow its stack on
 * a long run (so do `v`-flag class subtractions), so text is matched with its differing code points
 * replaced, which is rare and cheap to find, and cut where the copy's pieces end.
 */
export interface SplitPattern {
  /** For a `u`-flag RegExp. */
  readonly source: string;
  /** A `u`-flag class of every code point that differs, '' for none. */
  readonly differing: string;
  /** A class of differing code points, and the stand-ins for them in and beyond the BMP. */
  readonly standIns: ReadonlyArray<readonly [set: string, bmp: string, astral: string]>;
}

/** A code point the engine and tiktoken class alike for each set of class bits, in and beyond the BMP. */
const STAND_INS = new Map<number, [string, string]>([
  [0, ['\uffff', '\u{10ffff}']],
  [CLASS_SPACE, ['\u2000', '']],
  [CLASS_UPPER | CLASS_LOWER | CLASS_LETTER, ['\u05d0', '\u{20000}']],
  [CLASS_LOWER | CLASS_LETTER, ['\u00df', '\u{1d41a}']],
  [CLASS_UPPER | CLASS_LETTER, ['\u00c0', '\u{1d400}']],
  [CLASS_UPPER | CLASS_LOWER, ['\u0300', '\u{e0100}']],
  [CLASS_NUMBER, ['\u0660', '\u{1d7ce}']],
]);

/** tiktoken's classes: the engine's spelling, the crate's code points, the class bit. */
const TIKTOKEN_CLASSES: Array<[engine: string, ranges: string, bit: number]> = [
  ['\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}', UPPER_OR_MARK, CLASS_UPPER],
  ['\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}', LOWER_OR_MARK, CLASS_LOWER],
  ['\\p{L}', LETTER, CLASS_LETTER],
  ['\\p{N}', NUMBER, CLASS_NUMBER],
  ['\\s', WHITE_SPACE, CLASS_SPACE],
];

/** The code points whose classes differ, made once per process (the tables carry them to threads). */
let differences: Omit<SplitPattern, 'source'> | undefined;

/** The JavaScript counter's way to split text: tiktoken's for the two patterns it knows, any other as it is. */
function splitPattern(pattern: string): SplitPattern {
  if (patternFlavour(pattern) === 0) return { source: pattern, differing: '', standIns: [] };
  // tiktoken's contractions are case-insensitive, `(?i:'s|…)`, so `'ſ` (U+017F) is one too.
  const source = pattern.replaceAll(CONTRACTIONS, CONTRACTIONS.replace("'S|", "'S|'\u017f|"));
  differences ??= classDifferences();
  return { source, ...differences };
}

function classDifferences(): Omit<SplitPattern, 'source'> {
  // Every code point in order, surrogates as `!` (in none of the classes), so that a run of a class
  // in the string is a range of code points.
  const units = new Uint16Array(0x10000 + 2 * 0x100000);
  for (let c = 0; c < 0x10000; c++) units[c] = c >= 0xd800 && c <= 0xdfff ? 0x21 : c;
  for (let c = 0x10000, i = 0x10000; c < 0x110000; c++, i += 2) {
    units[i] = 0xd800 + ((c - 0x10000) >> 10);
    units[i + 1] = 0xdc00 + ((c - 0x10000) & 0x3ff);
  }
  const every = Buffer.from(units.buffer).toString('utf16le');
  const codeAt = (index: number): number => (index < 0x10000 ? index : 0x10000 + ((index - 0x10000) >> 1));
  // The class bits of every code point, as the engine and as tiktoken have them.
  const own = new Uint8Array(0x110000);
  const theirs = new Uint8Array(0x110000);
  for (const [engine, ranges, bit] of TIKTOKEN_CLASSES) {
    for (const run of every.matchAll(new RegExp(`[${engine}]+`, 'gu')))
      for (let c = codeAt(run.index), last = codeAt(run.index + run[0].length - 1); c <= last; c++)
        own[c] = own[c]! | bit;
    for (const [first, last] of codePointRanges(ranges))
      for (let c = first; c <= last; c++) theirs[c] = theirs[c]! | bit;
  }
  // Those that differ, grouped by tiktoken's bits (surrogates are U+FFFD to both).
  const groups = new Map<number, number[]>();
  for (let c = 0; c < 0x110000; c++) {
    if (own[c] === theirs[c] || (c >= 0xd800 && c <= 0xdfff)) continue;
    const group = groups.get(theirs[c]!);
    if (group === undefined) groups.set(theirs[c]!, [c]);
    else group.push(c);
  }
  const hex = (c: number): string => `\\u{${c.toString(16)}}`;
  /** Sorted code points as the ranges of a class. */
  const asClass = (codes: number[]): string => {
    let set = '';
    for (let i = 0; i < codes.length;) {
      let j = i;
      while (j + 1 < codes.length && codes[j + 1] === codes[j]! + 1) j++;
      set += j === i ? hex(codes[i]!) : `${hex(codes[i]!)}-${hex(codes[j]!)}`;
      i = j + 1;
    }
    return set;
  };
  const standIns: Array<[string, string, string]> = [];
  for (const [bits, codes] of groups) {
    const standIn = STAND_INS.get(bits);
    if (standIn === undefined || (standIn[1] === '' && codes.some((c) => c > 0xffff)))
      throw new Error(`No stand-in for characters of class bits ${bits}`);
    standIns.push([asClass(codes), ...standIn]);
  }
  return { differing: standIns.map(([set]) => set).join(''), standIns };
}

/** 1 for o200k_base's pattern, 2 for cl100k_base's (bpe-count.ts takes the same numbers), 0 for any other. */
export function patternFlavour(pattern: string): number {
  return pattern === O200K_PATTERN ? O200K : pattern === CL100K_PATTERN ? CL100K : 0;
}

/**
 * Whether both patterns match all of `bytes` as one piece, seen on the bytes alone: lower-case ASCII
 * letters (a letter run), or one ASCII letter or punctuation byte other than `'` over and over (a
 * letter run, or a punctuation run that no contraction can start).
 */
function isOneAsciiPiece(bytes: Uint8Array): boolean {
  const first = bytes[0];
  if (first === undefined) return false;
  let i = 0;
  if (first >= 0x61 && first <= 0x7a) while (i < bytes.length && bytes[i]! >= 0x61 && bytes[i]! <= 0x7a) i++;
  else if (first !== 0x27 && (isAsciiLetter(first) || isAsciiPunct(first)))
    while (i < bytes.length && bytes[i] === first) i++;
  return i === bytes.length;
}

/** Target bytes per slice of UTF-8 content: each decodes to a string far below V8's large-object size. */
const SLICE_BYTES = 1 << 16;

const isAsciiLetter = (b: number | undefined): boolean =>
  b !== undefined && ((b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a));
const isAsciiPunct = (b: number): boolean =>
  (b >= 0x21 && b <= 0x2f) || (b >= 0x3a && b <= 0x40) || (b >= 0x5b && b <= 0x60) || (b >= 0x7b && b <= 0x7e);

/**
 * Whether o200k_base's and cl100k_base's pre-tokenizers always end a piece right before byte `j`,
 * whatever surrounds it, and match the pieces before `j` the same when the text stops at `j`:
 * - `" x"` (space, ASCII letter): the space can only begin the letter piece that follows; every
 *   construct of both patterns treats that space like the end of the text, except `\s`, and a
 *   whitespace run before it ends at it either way (`\s+(?!\S)` leaves the last space).
 * - `"x,"` (ASCII letter, ASCII punctuation other than `'`): a letter piece cannot take punctuation,
 *   only a contraction (`'s`), so an apostrophe is never a split.
 * - `"\nx"` (newline, printable ASCII other than `/`): only a punctuation run takes characters
 *   after a newline, and only `\r`, `\n` and (o200k) `/`.
 * All three are ASCII, so a split is also a UTF-8 character boundary. The differential tests check
 * the sum of slice counts against whole-text counts on a corpus and on random text. 0 < j < length.
 */
export function isPieceBoundary(bytes: Uint8Array, j: number): boolean {
  const at = bytes[j]!;
  if (at === 0x20) return isAsciiLetter(bytes[j + 1]);
  const before = bytes[j - 1]!;
  if (isAsciiLetter(before)) return at !== 0x27 && isAsciiPunct(at);
  return before === 0x0a && at > 0x20 && at < 0x7f && at !== 0x2f;
}

/**
 * The end of the slice that starts at `from`: the piece boundary nearest below `from + size` (not
 * below its middle), else the first one above it, else the end of the content.
 */
function sliceEnd(bytes: Uint8Array, from: number, size: number): number {
  const target = from + size;
  if (target >= bytes.length) return bytes.length;
  const lowest = from + (size >> 1);
  for (let j = target; j > lowest; j--) if (isPieceBoundary(bytes, j)) return j;
  for (let j = target + 1; j < bytes.length; j++) if (isPieceBoundary(bytes, j)) return j;
  return bytes.length;
}

/**
 * `bytes` cut at piece boundaries into parts of about `partBytes` (views, no copy). The counts of the
 * parts add up to the count of the whole, so one big file can be counted on several threads at once.
 */
export function splitUtf8(bytes: Uint8Array, partBytes: number): Uint8Array[] {
  const parts: Uint8Array[] = [];
  for (let from = 0; from < bytes.length;) {
    const to = sliceEnd(bytes, from, Math.max(2, partBytes));
    parts.push(bytes.subarray(from, to));
    from = to;
  }
  return parts;
}

/**
 * The token count of UTF-8 `bytes`, equal to `count(decoded bytes)`, without ever decoding more
 * than about `sliceBytes` at once (content with no boundary at all, such as one long word, is
 * decoded whole). Large strings would live in V8's large-object space until a full collection,
 * so counting whole files made a worker's heap grow far past what it held.
 */
export function countUtf8(count: (text: string) => number, bytes: Uint8Array, sliceBytes = SLICE_BYTES): number {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let total = 0;
  for (let from = 0; from < buffer.length;) {
    const to = sliceEnd(buffer, from, Math.max(2, sliceBytes));
    total += count(buffer.toString('utf8', from, to));
    from = to;
  }
  return total;
}
