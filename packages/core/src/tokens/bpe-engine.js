// Exact tiktoken BPE *counting* (never encoding), shared by the in-thread counter and the worker.
// Plain ESM JavaScript so that a worker thread can load it on Node 20 from the TypeScript sources and
// from dist/ alike; types are in bpe-engine.d.ts.
//
// Why not an npm tokenizer as is (scripts/measure-tokenizers.mjs has the numbers): js-tiktoken is slow,
// gpt-tokenizer and ai-tokenizer spend most of their time decoding byte pairs back into strings and
// collapse once their LRU merge caches are full, ai-tokenizer miscounts `toString`/`valueOf`/… (its
// vocabulary is a plain object), tiktoken WASM is slower still, and every one of them merges a piece
// in O(n²), so a 13 k-emoji string in a test file takes seconds. This engine uses js-tiktoken's rank
// files and pre-tokenizer pattern as they are, and counts with the same rule as tiktoken (merge the
// adjacent pair with the lowest rank, leftmost first), on bytes held in typed arrays: about 5 MB of
// tables for o200k_base, a bounded merge cache, O(n log n) on long pieces. Special tokens are never
// looked for, so `<|endoftext|>` is ordinary text.
/* global WebAssembly */
import { Buffer } from 'node:buffer';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

// js-tiktoken ships each encoding's ranks as `js-tiktoken/ranks/<name>`. Which names are offered
// is decided once, in the contracts' vocabulary (TOKEN_ENCODINGS); this file cannot import it,
// since token threads load it with no TypeScript loader.
const RANK_MODULE_PREFIX = 'js-tiktoken/ranks/';

/** Pieces up to this many UTF-8 bytes merge in fixed scratch arrays with a linear min-scan; longer ones
 * in passes and a heap (mergeLong), so a megabyte of one character costs O(n) to O(n log n), not O(n²),
 * and beyond WINDOW_BYTES window by window (countWindows). */
const SMALL_PIECE_BYTES = 256;
/** UTF-8 buffer reused for pieces up to a third of this many chars; longer pieces get their own. */
const SCRATCH_BYTES = 1 << 16;
/** The merge cache: token counts of pieces up to CACHE_KEY_BYTES long that needed a merge (identifiers
 * outside the vocabulary recur within a file). It lives in fixed typed arrays (about 2.5 MB) and is
 * emptied whole when full, so memory is bounded and there is no per-miss eviction, the cost that makes
 * gpt-tokenizer's full LRU collapse on high-entropy text. String keys would also keep whole files
 * alive: V8 slices of 13+ characters point into their parent string. */
const CACHE_ENTRIES = 1 << 15;
const CACHE_KEY_BYTES = 64;
/** Pieces and tokens of up to this many bytes are looked up packed into two 32-bit words: one probe
 * reads key and value from one 16-byte slot, where the general table takes four dependent reads. */
const SHORT_BYTES = 8;
/** A bit for each hash of a short token (its top bits; the table's slot is its low bits), 256 kB:
 * most pairs that merging looks up are no token, and the filter, small enough to stay in a core's
 * cache, turns away about nine in ten of them before the table's slots, out in the last level. */
const SHORT_FILTER_LOG2 = 21;
const SHORT_FILTER_BITS = 1 << SHORT_FILTER_LOG2;
/** Recent short pieces and their counts, per counter, direct-mapped: 64 kB that stay in the core's
 * own cache, where source code spends most of its pieces on a few thousand kinds. */
const HOT_SLOTS = 1 << 12;
const NO_RANK = 0x7fffffff;
/** Pieces longer than this many bytes are counted in windows of this size (countWindows)... */
const WINDOW_BYTES = 8192;
/** ...that overlap by at least this many bytes, far more than any token (o200k's longest is 128). */
const OVERLAP_BYTES = 512;
/** mergeTree's most parts (a window's bytes), and most ranks: its keys are rank * TREE_LEAVES + part in 32 bits. */
const TREE_LEAVES = 8192;
const TREE_RANKS = 1 << 19;
const NO_KEY = 0xffffffff;
/** Slots of mergeLong's cache of the rank of two tokens side by side. */
const JOIN_SLOTS = 1 << 10;
const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** @type {Map<string, import('./bpe-engine.js').BpeTables>} */
const loaded = new Map();

/**
 * The rank tables of one encoding, built once per process on first use. They live in shared memory:
 * the tokenizer threads get them through workerData instead of each loading the 3 MB rank module and
 * building its own (about 10 MB and 0.1 s of CPU a thread).
 * @param {import('../types.js').TokenEncodingName} encoding
 * @returns {import('./bpe-engine.js').BpeTables}
 */
export function loadBpeTables(encoding) {
  let tables = loaded.get(encoding);
  if (tables === undefined) {
    const resolved = resolveRankModule(encoding);
    /** @type {{ pat_str: string, bpe_ranks: string }} */
    const ranks = require(resolved);
    tables = buildBpeTables(ranks.pat_str, ranks.bpe_ranks);
    // The tables hold all of it now: let the module's megabytes of base64 be collected.
    delete require.cache[resolved];
    loaded.set(encoding, tables);
  }
  return tables;
}

/** @param {string} encoding */
function resolveRankModule(encoding) {
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

/** Most pages a table memory may grow to: the tables plus every counter's region (bpe-wasm.js). */
export const TABLE_MEMORY_MAX_PAGES = 16384;

/**
 * One shared block holding every table, so they cross to worker threads without a copy. Where this
 * Node has WebAssembly the block is a shared WebAssembly memory, which the compiled counter
 * (bpe-wasm.js) reads in place and grows by a region per counter; elsewhere a SharedArrayBuffer.
 * @param {Array<[string, { BYTES_PER_ELEMENT: number }, number]>} layout name, array type, length
 * @returns {{ memory: import('./bpe-engine.js').TableMemory | null, buffer: SharedArrayBuffer, offsets: Record<string, number> }}
 */
function allocateTables(layout) {
  /** @type {Record<string, number>} */
  const offsets = {};
  let size = 0;
  for (const [name, Type, count] of layout) {
    size = (size + 15) & ~15;
    offsets[name] = size;
    size += count * Type.BYTES_PER_ELEMENT;
  }
  const pages = Math.ceil(size / 65536);
  let memory = null;
  try {
    memory = typeof WebAssembly === 'object' ? new WebAssembly.Memory({ initial: pages, maximum: TABLE_MEMORY_MAX_PAGES, shared: true }) : null;
  } catch {
    // No shared WebAssembly memory here (e.g. a Node without WebAssembly threads): plain shared memory.
  }
  const buffer = memory === null ? new SharedArrayBuffer(pages * 65536) : /** @type {SharedArrayBuffer} */ (memory.buffer);
  return { memory, buffer, offsets };
}

/**
 * Decodes js-tiktoken's rank format (lines of `! <first rank> <base64 token> …`) into one byte array
 * plus per-rank offsets, and indexes it with an open-addressing hash table (FNV-1a over the bytes).
 * It reads the base64 in place rather than splitting 200 k substrings out of it, which keeps the
 * transient heap, and so each worker's RSS, small.
 * @param {string} pattern
 * @param {string} bpeRanks
 * @returns {import('./bpe-engine.js').BpeTables}
 */
export function buildBpeTables(pattern, bpeRanks) {
  /** @type {Array<{ first: number, from: number, to: number }>} token runs: first rank, base64 span */
  const runs = [];
  let rankCount = 0;
  for (let at = 0; at < bpeRanks.length; ) {
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
        const v = sextet[c & 127];
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
      if (n === 2) pairRank[(bytes[begin] << 8) | bytes[begin + 1]] = rank;
      let h = FNV_OFFSET;
      for (let k = begin; k < used; k++) h = Math.imul(h ^ bytes[k], FNV_PRIME);
      let slot = h & mask;
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
    ['bytes', Uint8Array, used],
    ['start', Int32Array, rankCount],
    ['length', Uint16Array, rankCount],
    ['slots', Int32Array, slots.length],
    ['pairRank', Int32Array, pairRank.length],
    ['shortSlots', Int32Array, shortSlots.length],
    ['shortFilter', Int32Array, shortFilter.length],
    ['classes', Uint8Array, classes.length],
  ]);
  /**
   * @template {Uint8Array | Uint16Array | Int32Array} T
   * @param {string} name
   * @param {T} from
   * @returns {T}
   */
  const place = (name, from) => {
    const to = /** @type {T} */ (new /** @type {any} */ (from.constructor)(buffer, offsets[name], from.length));
    to.set(from);
    return to;
  };
  return {
    pattern,
    bytes: place('bytes', bytes.subarray(0, used)),
    start: place('start', start),
    length: place('length', length),
    slots: place('slots', slots),
    mask,
    pairRank: place('pairRank', pairRank),
    maxTokenBytes,
    shortSlots: place('shortSlots', shortSlots),
    shortMask,
    shortFilter: place('shortFilter', shortFilter),
    classes: place('classes', classes),
    memory,
    offsets,
  };
}

// Class bits of a character, as the two patterns tell characters apart (bpe-count.ts reads them).
const CLASS_UPPER = 1; // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
const CLASS_LOWER = 2; // [\p{Ll}\p{Lm}\p{Lo}\p{M}]
const CLASS_LETTER = 4; // \p{L}
const CLASS_NUMBER = 8; // \p{N}
const CLASS_SPACE = 16; // \s
const CLASS_NEWLINE = 32; // [\r\n]

/**
 * The class bits of every character of the Basic Multilingual Plane, found by this Node's own
 * regular expressions (the ones the pattern path runs), so both paths agree on every character
 * whatever Unicode version the engine has. Surrogates get none: they are not UTF-8.
 */
function buildCharClasses() {
  const classes = new Uint8Array(65536);
  const chars = [];
  for (let c = 0; c < 65536; c++) chars.push(c >= 0xd800 && c <= 0xdfff ? ' ' : String.fromCharCode(c));
  const all = chars.join('');
  /** @type {Array<[RegExp, number]>} */
  const sets = [
    [/[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]/gu, CLASS_UPPER],
    [/[\p{Ll}\p{Lm}\p{Lo}\p{M}]/gu, CLASS_LOWER],
    [/\p{L}/gu, CLASS_LETTER],
    [/\p{N}/gu, CLASS_NUMBER],
    [/\s/gu, CLASS_SPACE],
    [/[\r\n]/gu, CLASS_NEWLINE],
  ];
  for (const [set, bit] of sets) for (const match of all.matchAll(set)) classes[match.index] |= bit;
  classes.fill(0, 0xd800, 0xe000);
  return classes;
}

/**
 * Every token of 2 to SHORT_BYTES bytes in an open-addressing table of 16-byte slots: the token's
 * bytes packed little-endian into two words, its length and its rank (length 0 = empty slot).
 * @param {Uint8Array} bytes
 * @param {Int32Array} start
 * @param {Uint16Array} length
 */
function buildShortTable(bytes, start, length) {
  let tokens = 0;
  for (let rank = 0; rank < length.length; rank++) if (length[rank] >= 2 && length[rank] <= SHORT_BYTES) tokens++;
  // At most 60 % full: a hit takes about 1.7 probes.
  let size = 1;
  while (size * 0.6 < tokens) size <<= 1;
  const shortSlots = new Int32Array(size * 4);
  const shortMask = size - 1;
  const shortFilter = new Int32Array(SHORT_FILTER_BITS >> 5);
  for (let rank = 0; rank < length.length; rank++) {
    const n = length[rank];
    if (n < 2 || n > SHORT_BYTES) continue;
    const lo = packLo(bytes, start[rank], n);
    const hi = packHi(bytes, start[rank], n);
    let slot = shortHash(lo, hi, n) & shortMask;
    while (shortSlots[(slot << 2) + 2] !== 0) slot = (slot + 1) & shortMask;
    shortSlots.set([lo, hi, n, rank], slot << 2);
    const bit = shortHash(lo, hi, n) >>> (32 - SHORT_FILTER_LOG2);
    shortFilter[bit >> 5] |= 1 << (bit & 31);
  }
  return { shortSlots, shortMask, shortFilter };
}

/** Bytes 0-3 of buf[from, from + n), little-endian (fewer when n < 4). */
function packLo(buf, from, n) {
  const end = from + (n < 4 ? n : 4);
  let word = 0;
  for (let i = from, shift = 0; i < end; i++, shift += 8) word |= buf[i] << shift;
  return word;
}

/** Bytes 4-7 of buf[from, from + n), little-endian (0 when n <= 4). */
function packHi(buf, from, n) {
  const end = from + n;
  let word = 0;
  for (let i = from + 4, shift = 0; i < end; i++, shift += 8) word |= buf[i] << shift;
  return word;
}

/** Hash of a short piece from its packed words and length (murmur3's finaliser mixes them). */
function shortHash(lo, hi, n) {
  let h = Math.imul(lo ^ (n << 28), 0x9e3779b1) ^ Math.imul(hi, 0x85ebca77);
  h = Math.imul(h ^ (h >>> 15), 0xc2b2ae3d);
  return h ^ (h >>> 13);
}

/**
 * The value stored with a packed key in a table of 16-byte slots (`[lo, hi, length, value]`), or
 * NO_RANK when the key is not there.
 * @param {Int32Array} table
 * @param {number} tableMask
 */
function shortLookup(table, tableMask, lo, hi, n, h) {
  for (let slot = h & tableMask; ; slot = (slot + 1) & tableMask) {
    const at = slot << 2;
    const len = table[at + 2];
    if (len === 0) return NO_RANK;
    if (len === n && table[at] === lo && table[at + 1] === hi) return table[at + 3];
  }
}

/**
 * A counting function over one encoding's tables. Not re-entrant (it owns scratch buffers), so one per
 * thread or per counter.
 * @param {import('./bpe-engine.js').BpeTables} tables
 * @param {number} [smallPieceBytes] longest piece merged by the linear scan (changed by tests to
 *   compare the ways of merging)
 * @param {boolean} [passes] whether merging takes a whole rank at once where it can and long pieces
 *   in windows (false: tiktoken's loop and the heap or tree alone, for tests)
 * @returns {(text: string) => number}
 */
export function createBpeCount(tables, smallPieceBytes = SMALL_PIECE_BYTES, passes = true) {
  return createBpeCounter(tables, smallPieceBytes, CACHE_ENTRIES, passes).count;
}

/**
 * Both counting functions over one set of scratch buffers and one merge cache: `count` of a string,
 * and `countUtf8` of UTF-8 bytes, equal to `countUtf8(count, bytes)` but finding and counting the
 * pieces of ASCII text on the bytes themselves (asciiPieceEnd), with no decoding and no regular
 * expression; only text beyond ASCII goes through the pattern. Not re-entrant either.
 * @param {import('./bpe-engine.js').BpeTables} tables
 * @param {number} [smallPieceBytes]
 * @param {number} [cacheEntries] merge cache entries, a power of two (each about 100 bytes)
 * @param {boolean} [passes] false: no passes, sweeps or windows
 * @param {import('./bpe-engine.js').WindowMerger} [windows] merges pieces longer than
 *   smallPieceBytes and windows of longer ones (the compiled counter's, see bpe-wasm.js)
 * @returns {ReturnType<typeof import('./bpe-engine.js').createBpeCounter>} (see bpe-engine.d.ts)
 */
export function createBpeCounter(tables, smallPieceBytes = SMALL_PIECE_BYTES, cacheEntries = CACHE_ENTRIES, passes = true, windows = undefined) {
  const { bytes, start, length, slots, mask, pairRank, maxTokenBytes, shortSlots, shortMask, shortFilter } = tables;
  const sticky = new RegExp(tables.pattern, 'uy');
  const global = new RegExp(tables.pattern, 'ug');
  const scratch = new Uint8Array(SCRATCH_BYTES);
  const cacheKeys = new Uint8Array(cacheEntries * CACHE_KEY_BYTES);
  const cacheKeyLength = new Uint8Array(cacheEntries);
  const cacheCount = new Int32Array(cacheEntries);
  const cacheSlots = new Int32Array(cacheEntries * 2);
  const cacheMask = cacheSlots.length - 1;
  let cacheUsed = 0;
  // Short pieces outside the caches merge here whatever smallPieceBytes is.
  const bounds = new Int32Array(Math.max(smallPieceBytes, SHORT_BYTES) + 2);
  const ranks = new Int32Array(bounds.length);
  // Counts of short pieces outside the vocabulary (the merge cache's short keys), emptied when full.
  const shortCache = new Int32Array(cacheEntries * 2 * 4);
  const shortCacheMask = cacheEntries * 2 - 1;
  let shortCacheUsed = 0;
  const hot = new Int32Array(HOT_SLOTS * 4);
  // mergeLong's parts are tokens: the rank of each byte, and a cache of the rank of two tokens side
  // by side, by their ranks (a run joins the same few tokens over and over; no bytes to hash).
  const byteRank = new Int32Array(256);
  for (let b = 0; b < 256; b++) byteRank[b] = rankOf(Uint8Array.of(b), 0, 1);
  const joinLeft = new Int32Array(JOIN_SLOTS).fill(-1);
  const joinRight = new Int32Array(JOIN_SLOTS);
  const joinRank = new Int32Array(JOIN_SLOTS);
  // mergeTree's scratch and countWindows', made on first use.
  /** @type {Uint32Array | undefined} */
  let treeKeys;
  /** @type {Int32Array | undefined} */
  let treeNext;
  /** @type {Int32Array | undefined} */
  let treePrev;
  /** @type {Int32Array | undefined} */
  let windowStarts;
  /** @type {Int32Array | undefined} */
  let nextStarts;
  const windowBytes = windows?.windowBytes ?? WINDOW_BYTES;
  const overlap = Math.min(OVERLAP_BYTES, windowBytes >> 2);
  /** @type {(bytes: Uint8Array, out: Int32Array) => number} */
  const mergeWindow = windows?.mergeWindow ?? ((bytes, out) => mergeLong(bytes, bytes.length, out));

  /** Tokens in buf[from, from + n), 2 <= n <= SHORT_BYTES, one piece. */
  function countShort(buf, from, n) {
    const lo = packLo(buf, from, n);
    const hi = packHi(buf, from, n);
    const h = shortHash(lo, hi, n);
    const at = (h & (HOT_SLOTS - 1)) << 2;
    if (hot[at + 2] === n && hot[at] === lo && hot[at + 1] === hi) return hot[at + 3];
    let parts = shortLookup(shortSlots, shortMask, lo, hi, n, h) !== NO_RANK ? 1 : shortLookup(shortCache, shortCacheMask, lo, hi, n, h);
    if (parts === NO_RANK) {
      for (let k = 0; k < n; k++) scratch[k] = buf[from + k];
      parts = mergeSmall(scratch, n);
      if (shortCacheUsed === cacheEntries) {
        shortCache.fill(0);
        shortCacheUsed = 0;
      }
      shortCacheUsed++;
      let slot = h & shortCacheMask;
      while (shortCache[(slot << 2) + 2] !== 0) slot = (slot + 1) & shortCacheMask;
      shortCache.set([lo, hi, n, parts], slot << 2);
    }
    hot[at] = lo;
    hot[at + 1] = hi;
    hot[at + 2] = n;
    hot[at + 3] = parts;
    return parts;
  }

  /** Rank of buf[from, to) with its FNV hash already computed, or NO_RANK. */
  function rankOfHashed(buf, from, to, h) {
    const n = to - from;
    let slot = h & mask;
    for (;;) {
      const entry = slots[slot];
      if (entry === 0) return NO_RANK;
      const rank = entry - 1;
      if (length[rank] === n) {
        const at = start[rank];
        let k = 0;
        while (k < n && bytes[at + k] === buf[from + k]) k++;
        if (k === n) return rank;
      }
      slot = (slot + 1) & mask;
    }
  }

  /** Rank of buf[from, to), or NO_RANK. */
  function rankOf(buf, from, to) {
    const n = to - from;
    if (n >= 2 && n <= SHORT_BYTES) {
      const lo = packLo(buf, from, n);
      const hi = packHi(buf, from, n);
      const h = shortHash(lo, hi, n);
      const bit = h >>> (32 - SHORT_FILTER_LOG2);
      if ((shortFilter[bit >> 5] & (1 << (bit & 31))) === 0) return NO_RANK;
      return shortLookup(shortSlots, shortMask, lo, hi, n, h);
    }
    if (n > maxTokenBytes) return NO_RANK;
    let h = FNV_OFFSET;
    for (let i = from; i < to; i++) h = Math.imul(h ^ buf[i], FNV_PRIME);
    return rankOfHashed(buf, from, to, h);
  }

  /** Tokens of buf[0, n) (n <= CACHE_KEY_BYTES, hash h), from the merge cache or merged and cached. */
  function mergeCached(buf, n, h) {
    let slot = h & cacheMask;
    for (let entry = cacheSlots[slot]; entry !== 0; entry = cacheSlots[slot]) {
      const e = entry - 1;
      if (cacheKeyLength[e] === n) {
        const at = e * CACHE_KEY_BYTES;
        let k = 0;
        while (k < n && cacheKeys[at + k] === buf[k]) k++;
        if (k === n) return cacheCount[e];
      }
      slot = (slot + 1) & cacheMask;
    }
    const parts = n <= smallPieceBytes ? mergeSmall(buf, n) : mergeLong(buf, n);
    if (cacheUsed === cacheEntries) {
      cacheSlots.fill(0);
      cacheUsed = 0;
      slot = h & cacheMask;
    }
    const e = cacheUsed++;
    cacheKeys.set(buf.subarray(0, n), e * CACHE_KEY_BYTES);
    cacheKeyLength[e] = n;
    cacheCount[e] = parts;
    cacheSlots[slot] = e + 1;
    return parts;
  }

  /**
   * Parts left after merging buf[0, n): tiktoken's loop, on fixed scratch arrays. Where the lowest
   * rank r comes more than once (a run), one sweep merges every pair of rank r at once.
   */
  function mergeSmall(buf, n) {
    for (let i = 0; i <= n; i++) bounds[i] = i;
    for (let i = 0; i < n - 1; i++) ranks[i] = pairRank[(buf[i] << 8) | buf[i + 1]];
    let parts = n;
    for (;;) {
      let min = NO_RANK;
      let at = -1;
      let again = false;
      for (let i = 0; i < parts - 1; i++) {
        const r = ranks[i];
        if (r < min) {
          min = r;
          at = i;
          again = false;
        } else if (r === min) again = true;
      }
      if (at < 0) return parts;
      if (again && passes) {
        parts = sweep(buf, parts, at, min);
        continue;
      }
      bounds.copyWithin(at + 1, at + 2, parts + 1);
      ranks.copyWithin(at, at + 1, parts - 1);
      parts--;
      if (at < parts - 1) ranks[at] = rankOf(buf, bounds[at], bounds[at + 2]);
      if (at > 0) ranks[at - 1] = rankOf(buf, bounds[at - 1], bounds[at + 1]);
    }
  }

  /**
   * mergeSmall's sweep: every pair of rank r from pair `at` on, left to right, compacting the parts
   * in place, as mergeLong's passes do (and it stops where they stop). Returns the parts left.
   */
  function sweep(buf, parts, at, r) {
    // Parts w and on are written over parts i and on; `last` is part w - 1's index before the
    // sweep, or -1 when the sweep made it.
    let w = at;
    let last = at - 1;
    let i = at;
    let stopped = false;
    while (i < parts) {
      const from = bounds[i];
      const made = i < parts - 1 && ranks[i] === r;
      const old = made ? -1 : i;
      i += made ? 2 : 1;
      if (w > 0) {
        const rank = made || last < 0 ? rankOf(buf, bounds[w - 1], bounds[i]) : ranks[last];
        ranks[w - 1] = rank;
        if (rank <= r) stopped = true;
      }
      bounds[w] = from;
      last = old;
      w++;
      // Before the next part merges in turn, the pair it breaks, which tiktoken would merge first
      // if it ranked below r.
      if (made && !stopped && i < parts - 1 && ranks[i] === r && rankOf(buf, from, bounds[i + 1]) <= r) stopped = true;
      if (stopped) break;
    }
    if (i < parts) {
      // Stopped: the pair from the last part written, then the rest as they were.
      ranks[w - 1] = last < 0 ? rankOf(buf, bounds[w - 1], bounds[i + 1]) : ranks[last];
      bounds.copyWithin(w, i, parts + 1);
      ranks.copyWithin(w, i, parts - 1);
      return w + parts - i;
    }
    bounds[w] = bounds[parts];
    return w;
  }

  /** Rank of token a followed by token b, their bytes buf[from, to), through the join cache. */
  function join(a, b, buf, from, to) {
    // A byte outside the vocabulary (none in o200k or cl100k) has no rank to key on.
    if (a === NO_RANK || b === NO_RANK) return rankOf(buf, from, to);
    const slot = (Math.imul(a, 0x9e3779b1) ^ b) & (JOIN_SLOTS - 1);
    if (joinLeft[slot] === a && joinRight[slot] === b) return joinRank[slot];
    const rank = rankOf(buf, from, to);
    joinLeft[slot] = a;
    joinRight[slot] = b;
    joinRank[slot] = rank;
    return rank;
  }

  /**
   * Parts left after merging buf[0, n), a piece longer than the linear scan takes, in tiktoken's
   * order (the pair of lowest rank first, the leftmost of equals).
   *
   * First in passes: a pass merges every pair of the lowest rank r from left to right and compacts
   * the parts in place. That is tiktoken's order while no merge makes a pair of rank r or lower. A
   * merge makes pairs longer than token r, so of other ranks, and of a lower one only where the
   * vocabulary holds a token that its own merges would build another way; a pass stops at such a
   * pair. A run of one character takes a few passes over ever fewer parts, where a heap pays a
   * logarithm and cache misses for every merge.
   *
   * Then, once passes no longer pay (text that is not a run merges few pairs a pass) or one stopped,
   * an indexed min-heap of the pairs keyed (rank, position) over a linked list of the parts, in
   * O(m log m). With `out`, where each part left starts, in order.
   * @param {Uint8Array} buf
   * @param {number} n
   * @param {Int32Array} [out]
   */
  function mergeLong(buf, n, out) {
    // Part i: the rank of its token, where its bytes start (offset[m] = n), the rank of the pair it begins.
    const token = new Int32Array(n);
    const offset = new Int32Array(n + 1);
    const pair = new Int32Array(n);
    let low = NO_RANK;
    for (let i = 0; i < n; i++) {
      const r = i < n - 1 ? pairRank[(buf[i] << 8) | buf[i + 1]] : NO_RANK;
      token[i] = byteRank[buf[i]];
      offset[i] = i;
      pair[i] = r;
      if (r < low) low = r;
    }
    offset[n] = n;
    let m = n;
    let stopped = false;
    // Passes go on while their merges pay for them: each costs m steps and earns 16 a merge, from a
    // start of 4n (20n steps at most in all).
    let budget = passes ? 4 * n : 0;
    while (low !== NO_RANK && !stopped && budget >= m) {
      budget -= m;
      const r = low;
      low = NO_RANK;
      // Parts w and on are written over parts i and on (w <= i); `last` is part w - 1's index
      // before the pass, or -1 when this pass made it.
      let w = 0;
      let last = -1;
      let i = 0;
      while (i < m) {
        const from = offset[i];
        const made = pair[i] === r;
        const tok = made ? r : token[i];
        const old = made ? -1 : i;
        i += made ? 2 : 1;
        if (w > 0) {
          const rank = made || last < 0 ? join(token[w - 1], tok, buf, offset[w - 1], offset[i]) : pair[last];
          pair[w - 1] = rank;
          if (rank < low) low = rank;
          if (rank <= r) stopped = true;
        }
        token[w] = tok;
        offset[w] = from;
        last = old;
        w++;
        // Before the next part merges in turn, the pair it breaks: tiktoken would merge that one
        // first if it ranked below r.
        if (made && !stopped && i < m && pair[i] === r && join(r, token[i], buf, from, offset[i + 1]) <= r) stopped = true;
        if (stopped) break;
      }
      if (i < m) {
        // Stopped: the pair from the last part made, then the rest as they were.
        pair[w - 1] = last < 0 ? join(token[w - 1], token[i], buf, offset[w - 1], offset[i + 1]) : pair[last];
        token.copyWithin(w, i, m);
        offset.copyWithin(w, i, m);
        pair.copyWithin(w, i, m);
        w += m - i;
      } else pair[w - 1] = NO_RANK;
      offset[w] = n;
      budget += 16 * (m - w);
      m = w;
    }
    if (low === NO_RANK && !stopped) {
      if (out !== undefined) out.set(offset.subarray(0, m));
      return m;
    }
    if (m <= TREE_LEAVES && start.length <= TREE_RANKS) return mergeTree(buf, m, offset, pair, out);

    const next = new Int32Array(m);
    const prev = new Int32Array(m);
    const rankAt = pair;
    const heap = token;
    const slot = new Int32Array(m).fill(-1);
    let size = 0;
    const less = (a, b) => {
      const ra = rankAt[a];
      const rb = rankAt[b];
      return ra < rb || (ra === rb && a < b);
    };
    const place = (p, i) => {
      heap[i] = p;
      slot[p] = i;
    };
    const siftUp = (i) => {
      const p = heap[i];
      while (i > 0) {
        const parent = (i - 1) >> 1;
        const q = heap[parent];
        if (!less(p, q)) break;
        place(q, i);
        i = parent;
      }
      place(p, i);
    };
    const siftDown = (i) => {
      const p = heap[i];
      for (;;) {
        let child = 2 * i + 1;
        if (child >= size) break;
        if (child + 1 < size && less(heap[child + 1], heap[child])) child++;
        const c = heap[child];
        if (!less(c, p)) break;
        place(c, i);
        i = child;
      }
      place(p, i);
    };
    const remove = (p) => {
      const i = slot[p];
      if (i < 0) return;
      slot[p] = -1;
      const last = heap[--size];
      if (last === p) return;
      place(last, i);
      siftDown(i);
      siftUp(slot[last]);
    };
    /** Re-key part p after its pair changed: insert, move or drop it. */
    const rekey = (p, rank) => {
      rankAt[p] = rank;
      if (rank === NO_RANK) {
        remove(p);
        return;
      }
      let i = slot[p];
      if (i < 0) {
        i = size++;
        place(p, i);
      }
      siftUp(i);
      siftDown(slot[p]);
    };

    for (let p = 0; p < m; p++) {
      next[p] = p + 1;
      prev[p] = p - 1;
      if (rankAt[p] !== NO_RANK) place(p, size++);
    }
    for (let i = (size >> 1) - 1; i >= 0; i--) siftDown(i);

    let parts = m;
    while (size > 0) {
      const p = heap[0];
      const q = next[p];
      const after = next[q];
      remove(q);
      next[p] = after;
      if (after < m) prev[after] = p;
      parts--;
      rekey(p, after < m ? rankOf(buf, offset[p], offset[next[after]]) : NO_RANK);
      if (p > 0) {
        const before = prev[p];
        rekey(before, rankOf(buf, offset[before], offset[after]));
      }
    }
    if (out !== undefined) for (let p = 0, i = 0; p < m; p = next[p]) out[i++] = offset[p];
    return parts;
  }

  /**
   * mergeLong after its passes for up to TREE_LEAVES parts (a window), as the compiled counter
   * merges: a tournament tree whose every node holds the least key (rank, part) below it, in one
   * array, where the heap's comparisons read ranks elsewhere. Part p starts at offset[p] and its
   * pair has rank pair[p].
   * @param {Uint8Array} buf
   * @param {number} m
   * @param {Int32Array} offset
   * @param {Int32Array} pair
   * @param {Int32Array} [out]
   */
  function mergeTree(buf, m, offset, pair, out) {
    const tree = (treeKeys ??= new Uint32Array(2 * TREE_LEAVES));
    const next = (treeNext ??= new Int32Array(TREE_LEAVES));
    const prev = (treePrev ??= new Int32Array(TREE_LEAVES));
    let leaves = 1;
    while (leaves < m) leaves <<= 1;
    tree.fill(NO_KEY, leaves, 2 * leaves);
    for (let p = 0; p < m; p++) {
      next[p] = p + 1;
      prev[p] = p - 1;
      if (pair[p] !== NO_RANK) tree[leaves + p] = pair[p] * TREE_LEAVES + p;
    }
    for (let node = leaves - 1; node >= 1; node--) tree[node] = Math.min(tree[2 * node], tree[2 * node + 1]);
    /** Leaf p to `key`, and the minima above it up to the first that stays. */
    const set = (p, key) => {
      let node = leaves + p;
      tree[node] = key;
      while (node > 1) {
        const least = Math.min(key, tree[node ^ 1]);
        node >>= 1;
        if (tree[node] === least) break;
        tree[node] = least;
        key = least;
      }
    };
    const keyOf = (rank, p) => (rank === NO_RANK ? NO_KEY : rank * TREE_LEAVES + p);
    let parts = m;
    for (let key = tree[1]; key !== NO_KEY; key = tree[1]) {
      const p = key % TREE_LEAVES;
      const q = next[p];
      const after = next[q];
      next[p] = after;
      if (after < m) prev[after] = p;
      parts--;
      set(q, NO_KEY);
      set(p, after < m ? keyOf(rankOf(buf, offset[p], offset[next[after]]), p) : NO_KEY);
      if (p > 0) {
        const before = prev[p];
        set(before, keyOf(rankOf(buf, offset[before], offset[after]), before));
      }
    }
    if (out !== undefined) for (let p = 0, i = 0; p < m; p = next[p]) out[i++] = offset[p];
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
   * mergeLong, O(n log n) as before. A window starts where a token of the one before starts, so
   * that both cut a run of one character alike.
   * @param {Uint8Array} buf
   * @param {number} n
   */
  function countWindows(buf, n) {
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
        while (k < parts && s + starts[k] < e - reach) k++;
        // No token starts there, or the same as before: no wider overlap to try.
        if (k === parts || starts[k] === 0 || s + starts[k] === s2) continue;
        s2 = s + starts[k];
        e2 = Math.min(n, s2 + windowBytes);
        parts2 = mergeWindow(buf.subarray(s2, e2), next);
        // The first token both windows have, at or after token `from`.
        let i = k;
        j = 0;
        while (i < parts && j < parts2) {
          const a = s + starts[i];
          const b = s2 + next[j];
          if (a < b) i++;
          else if (b < a) j++;
          else if ((i + 1 < parts ? s + starts[i + 1] : e) === (j + 1 < parts2 ? s2 + next[j + 1] : e2)) {
            shared = i;
            break;
          } else {
            i++;
            j++;
          }
        }
        if (shared >= 0) break;
      }
      if (shared < 0) return mergeLong(buf, n);
      total += shared - from + 1;
      from = j + 1;
      [starts, next] = [next, starts];
      s = s2;
      e = e2;
      parts = parts2;
    }
    return total + parts - from;
  }

  /** Tokens in text[from, to), one pre-tokenizer piece. */
  function countPiece(text, from, to) {
    const chars = to - from;
    const buf = chars * 3 <= scratch.length ? scratch : new Uint8Array(chars * 3);
    // ASCII fast path: bytes are the char codes.
    let n = 0;
    let i = from;
    for (; i < to; i++) {
      const c = text.charCodeAt(i);
      if (c >= 0x80) break;
      buf[n++] = c;
    }
    if (i < to) {
      // UTF-8 as TextEncoder writes it (a lone surrogate becomes U+FFFD), like js-tiktoken.
      for (; i < to; i++) {
        let c = text.charCodeAt(i);
        if (c < 0x80) buf[n++] = c;
        else if (c < 0x800) {
          buf[n++] = 0xc0 | (c >> 6);
          buf[n++] = 0x80 | (c & 63);
        } else if (c >= 0xd800 && c <= 0xdfff) {
          const d = i + 1 < to ? text.charCodeAt(i + 1) : 0;
          if (c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff) {
            c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
            i++;
            buf[n++] = 0xf0 | (c >> 18);
            buf[n++] = 0x80 | ((c >> 12) & 63);
            buf[n++] = 0x80 | ((c >> 6) & 63);
            buf[n++] = 0x80 | (c & 63);
          } else {
            buf[n++] = 0xef;
            buf[n++] = 0xbf;
            buf[n++] = 0xbd;
          }
        } else {
          buf[n++] = 0xe0 | (c >> 12);
          buf[n++] = 0x80 | ((c >> 6) & 63);
          buf[n++] = 0x80 | (c & 63);
        }
      }
    }
    return countPieceBytes(buf, 0, n);
  }

  /** Tokens in src[from, to), one piece's UTF-8 bytes. */
  function countPieceBytes(src, from, to) {
    const n = to - from;
    if (n === 1) return 1;
    if (n <= SHORT_BYTES) return countShort(src, from, n);
    if (n <= CACHE_KEY_BYTES) {
      let h = FNV_OFFSET;
      for (let i = from; i < to; i++) h = Math.imul(h ^ src[i], FNV_PRIME);
      if (n <= maxTokenBytes && rankOfHashed(src, from, to, h) !== NO_RANK) return 1;
      for (let i = 0; i < n; i++) scratch[i] = src[from + i];
      return mergeCached(scratch, n, h);
    }
    const buf = src.subarray(from, to);
    if (rankOf(buf, 0, n) !== NO_RANK) return 1;
    if (n <= smallPieceBytes) return mergeSmall(buf, n);
    if (!passes) return mergeLong(buf, n);
    if (n > windowBytes) return countWindows(buf, n);
    return windows?.mergeWindow === undefined ? mergeLong(buf, n) : windows.mergeWindow(buf, (windowStarts ??= new Int32Array(windowBytes)));
  }

  /** @param {string} text */
  function count(text) {
    let total = 0;
    let from = 0;
    while (from < text.length) {
      sticky.lastIndex = from;
      if (sticky.test(text)) {
        const to = sticky.lastIndex;
        total += countPiece(text, from, to);
        from = to;
      } else {
        // The patterns match every code point, so this never runs; if one day it does, skip the
        // unmatched characters exactly as js-tiktoken's matchAll would.
        global.lastIndex = from;
        const match = global.exec(text);
        if (match === null) break;
        from = match.index;
      }
    }
    return total;
  }

  const flavour = patternFlavour(tables.pattern);

  /** Tokens in src[from, to) through the pattern: from a piece's start to a point where both patterns always end one. */
  function countStretch(src, from, to) {
    return countUtf8(count, src.subarray(from, to));
  }

  /** @param {Uint8Array} src */
  function countUtf8Bytes(src) {
    if (flavour === 0) return countUtf8(count, src);
    const n = src.length;
    let total = 0;
    for (let from = 0; from < n; ) {
      const to = asciiPieceEnd(flavour, src, from, n);
      if (to > from) {
        total += countPieceBytes(src, from, to);
        from = to;
        continue;
      }
      // A piece that text beyond ASCII may change: the pattern counts from here to the next point
      // where both patterns always end a piece (`from` is a piece's start, so the pieces between
      // are the whole text's).
      let next = from + 1;
      while (next < n && !isPieceBoundary(src, next)) next++;
      total += countStretch(src, from, next);
      from = next;
    }
    return total;
  }

  return {
    count,
    countUtf8: countUtf8Bytes,
    scansAsciiBytes: flavour !== 0,
    countPiece: countPieceBytes,
    countStretch,
  };
}

// The two patterns the byte scanner below knows, as js-tiktoken ships them; any other pattern is
// counted through the regular expression alone.
const CONTRACTIONS = "('s|'S|'t|'T|'re|'rE|'Re|'RE|'ve|'vE|'Ve|'VE|'m|'M|'ll|'lL|'Ll|'LL|'d|'D)";
const O200K_PATTERN =
  `[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+${CONTRACTIONS}?` +
  `|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*${CONTRACTIONS}?` +
  '|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+';
const CL100K_PATTERN = `${CONTRACTIONS}|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+`;
const O200K = 1;
const CL100K = 2;

/**
 * Which of the two patterns the byte scanners know this is (bpe-count.ts takes the same numbers),
 * or 0 for any other, which only the pattern itself counts.
 * @param {string} pattern
 */
export function patternFlavour(pattern) {
  return pattern === O200K_PATTERN ? O200K : pattern === CL100K_PATTERN ? CL100K : 0;
}

// What the patterns see in an ASCII byte besides letters and digits: \s is tab to carriage return
// and space, and everything else that is not a letter or digit is punctuation (control characters
// included). Bytes beyond ASCII are neither, and every scan stops at them.
const SPACE = 1;
const PUNCT = 2;
const ASCII_KIND = new Uint8Array(256);
for (let c = 0; c < 0x80; c++) {
  if (c === 0x20 || (c >= 0x09 && c <= 0x0d)) ASCII_KIND[c] = SPACE;
  else if (!isLetterByte(c) && !(c >= 0x30 && c <= 0x39)) ASCII_KIND[c] = PUNCT;
}

/** After a letter run ending at `at`: the end of an optional contraction ('s, 'T, 're, 'LL, …). */
function contractionEnd(b, at, n) {
  if (at + 1 >= n || b[at] !== 0x27) return at;
  // `| 0x20` lower-cases a letter; no other byte lands on these letters.
  const x = b[at + 1] | 0x20;
  if (x === 0x73 || x === 0x74 || x === 0x6d || x === 0x64) return at + 2;
  if (at + 2 >= n) return at;
  const y = b[at + 2] | 0x20;
  if ((x === 0x72 || x === 0x76) && y === 0x65) return at + 3;
  if (x === 0x6c && y === 0x6c) return at + 3;
  return at;
}

/**
 * The end of the pre-tokenizer piece that starts at `from` (a piece's start), found on the bytes
 * the way the pattern (o200k_base's or cl100k_base's) would find it on the decoded text, or -1 when
 * that piece depends on a byte beyond ASCII: a letter, digit, space or symbol the pattern might
 * take into the piece, or that decides where it ends. Every loop that stops stops at an ASCII byte
 * or at the end, where ASCII classes are the pattern's classes.
 * @param {number} flavour
 * @param {Uint8Array} b
 * @param {number} from
 * @param {number} n
 */
function asciiPieceEnd(flavour, b, from, n) {
  const first = b[from];
  if (first >= 0x80) return -1;
  if (flavour === CL100K && first === 0x27) {
    const end = contractionEnd(b, from, n);
    if (end > from) return end;
  }
  // Letters, after at most one character that is not a newline, letter or digit.
  let at = from;
  if (!isLetterByte(first)) {
    if (first - 0x30 < 10 && first >= 0x30) return digitsEnd(b, from, n);
    if (first === 0x0a || first === 0x0d) return whitespaceEnd(b, from, n);
    at = from + 1;
    if (at === n) return n;
    const next = b[at];
    if (next >= 0x80) return -1;
    if (!isLetterByte(next)) return (ASCII_KIND[first] & PUNCT) !== 0 || first === 0x20 ? punctuationEnd(flavour, b, from, n) : whitespaceEnd(b, from, n);
  }
  let end = at;
  let c = 0;
  if (flavour === O200K) {
    // [\p{Lu}…]*[\p{Ll}…]+ or [\p{Lu}…]+[\p{Ll}…]*: capitals, then lower case, then a contraction.
    while (end < n && (c = b[end]) >= 0x41 && c <= 0x5a) end++;
    while (end < n && (c = b[end]) >= 0x61 && c <= 0x7a) end++;
    if (end < n && c >= 0x80) return -1;
    return c === 0x27 ? contractionEnd(b, end, n) : end;
  }
  while (end < n && isLetterByte((c = b[end]))) end++;
  return end < n && c >= 0x80 ? -1 : end;
}

/** Whether ASCII byte c is a letter (`| 0x20` folds capitals onto lower case and nothing else onto a-z). */
function isLetterByte(c) {
  const folded = (c | 0x20) - 0x61;
  return folded >= 0 && folded < 26;
}

/** `\p{N}{1,3}` from a digit at `from`, or -1 when a byte beyond ASCII might be a digit of it. */
function digitsEnd(b, from, n) {
  const last = from + 3 < n ? from + 3 : n;
  let end = from + 1;
  for (; end < last; end++) {
    const c = b[end];
    if (c >= 0x80) return -1;
    if (c < 0x30 || c > 0x39) break;
  }
  return end;
}

/** ` ?[^\s\p{L}\p{N}]+[\r\n/]*` (cl100k: `[\r\n]*`) from a space or a punctuation byte at `from`. */
function punctuationEnd(flavour, b, from, n) {
  let end = b[from] === 0x20 ? from + 1 : from;
  const run = end;
  let c = 0;
  while (end < n && (ASCII_KIND[(c = b[end])] & PUNCT) !== 0) end++;
  if (end < n && c >= 0x80) return -1;
  // A space before something else: whitespace (the punctuation run never started).
  if (end === run) return whitespaceEnd(b, from, n);
  while (end < n && ((c = b[end]) === 0x0a || c === 0x0d || (c === 0x2f && flavour === O200K))) end++;
  return end;
}

/**
 * Whitespace from `from`: `\s*[\r\n]+` up to the run's last newline, else `\s+(?!\S)` (all of a
 * run at the end of the text, else all but its last character), else `\s+` (one character); -1
 * when the run ends at a byte beyond ASCII, which may be whitespace too.
 */
function whitespaceEnd(b, from, n) {
  let end = from;
  let lastNewline = -1;
  let c = 0;
  for (; end < n && (ASCII_KIND[(c = b[end])] & SPACE) !== 0; end++) {
    if (c === 0x0a || c === 0x0d) lastNewline = end;
  }
  if (end < n && c >= 0x80) return -1;
  if (lastNewline >= 0) return lastNewline + 1;
  if (end === n) return end;
  return end - from >= 2 ? end - 1 : from + 1;
}

/** Target bytes per slice of UTF-8 content: each decodes to a string far below V8's large-object size. */
const SLICE_BYTES = 1 << 16;

/** @param {number | undefined} b */
const isAsciiLetter = (b) => b !== undefined && ((b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a));
/** @param {number} b */
const isAsciiPunct = (b) => (b >= 0x21 && b <= 0x2f) || (b >= 0x3a && b <= 0x40) || (b >= 0x5b && b <= 0x60) || (b >= 0x7b && b <= 0x7e);

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
 * the sum of slice counts against whole-text counts on a corpus and on random text.
 * @param {Uint8Array} bytes
 * @param {number} j 0 < j < bytes.length
 */
function isPieceBoundary(bytes, j) {
  const at = /** @type {number} */ (bytes[j]);
  if (at === 0x20) return isAsciiLetter(bytes[j + 1]);
  const before = /** @type {number} */ (bytes[j - 1]);
  if (isAsciiLetter(before)) return at !== 0x27 && isAsciiPunct(at);
  return before === 0x0a && at > 0x20 && at < 0x7f && at !== 0x2f;
}

/**
 * The end of the slice that starts at `from`: the piece boundary nearest below `from + size` (not
 * below its middle), else the first one above it, else the end of the content.
 * @param {Uint8Array} bytes
 * @param {number} from
 * @param {number} size
 */
function sliceEnd(bytes, from, size) {
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
 * @param {Uint8Array} bytes
 * @param {number} partBytes
 * @returns {Uint8Array[]}
 */
export function splitUtf8(bytes, partBytes) {
  const parts = [];
  for (let from = 0; from < bytes.length; ) {
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
 * @param {(text: string) => number} count
 * @param {Uint8Array} bytes
 * @param {number} [sliceBytes]
 */
export function countUtf8(count, bytes, sliceBytes = SLICE_BYTES) {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let total = 0;
  for (let from = 0; from < buffer.length; ) {
    const to = sliceEnd(buffer, from, Math.max(2, sliceBytes));
    total += count(buffer.toString('utf8', from, to));
    from = to;
  }
  return total;
}
