// Exact tiktoken BPE token counting of UTF-8 bytes (o200k_base and cl100k_base pre-tokenizers),
// compiled to WebAssembly. AssemblyScript source: `npm run wasm` compiles it into
// packages/core/src/tokens/bpe-count-wasm.ts. The tables are built by bpe-engine.js into a shared
// memory and read here in place; every counter owns one region of that memory (its input, its
// caches and its scratch), so any number of threads count over one copy of the tables.
//
// The pre-tokenizer is the patterns' own alternation, followed code point by code point over the
// classes bpe-engine.js computes for every character of the Basic Multilingual Plane from the
// character classes of tiktoken's regex crate (unicode-classes.ts). What this module does not
// handle it reports as an exception for JavaScript to count: a stretch holding a code point beyond
// the BMP or bytes that are not UTF-8 (counted with the pattern itself), and a piece longer than
// MAX_PIECE bytes, which
// bpe-engine.js counts in windows that it merges here (mergeWindow).

// Class bits of a code point (the class table's bytes).
const U: u32 = 1; // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
const W: u32 = 2; // [\p{Ll}\p{Lm}\p{Lo}\p{M}]
const L: u32 = 4; // \p{L}
const N: u32 = 8; // \p{N}
const S: u32 = 16; // \s
const NL: u32 = 32; // [\r\n]

const O200K: i32 = 1;
const CL100K: i32 = 2;

const NO_RANK: i32 = 0x7fffffff;
const SHORT_BYTES: i32 = 8;
const CACHE_KEY_BYTES: i32 = 64;
const SMALL_PIECE_BYTES: i32 = 64;
/** Longer pieces are exceptions (merge scratch for any length would not fit a region); the windows
 * they are counted in are this long. */
export const MAX_PIECE: i32 = 8192;
// mergeLarge's tree keys: a rank (below 2^19) above a part's place (below MAX_PIECE).
const POSITION_BITS: u32 = 13;
const POSITION_MASK: u32 = (1 << POSITION_BITS) - 1;
const NO_KEY: u32 = 0xffffffff;

// A region: [hot | short cache | long cache slots | long cache keys | long cache lengths and counts
// | merge scratch | window and its token starts | exceptions | input].
const HOT_SLOTS: u32 = 1 << 12;
const CACHE_ENTRIES: u32 = 1 << 14;
const CACHE_SLOTS: u32 = CACHE_ENTRIES * 2;
export const EXCEPTION_SLOTS: i32 = 1 << 12;
export const INPUT_BYTES: i32 = 1 << 18;
const INPUT_PADDING: i32 = 16;

const HOT_AT: usize = 0;
const SHORT_CACHE_AT: usize = HOT_AT + (<usize>HOT_SLOTS << 4);
const LONG_SLOTS_AT: usize = SHORT_CACHE_AT + (<usize>CACHE_SLOTS << 4);
const LONG_KEYS_AT: usize = LONG_SLOTS_AT + (<usize>CACHE_SLOTS << 2);
const LONG_LENGTHS_AT: usize = LONG_KEYS_AT + <usize>CACHE_ENTRIES * <usize>CACHE_KEY_BYTES;
const LONG_COUNTS_AT: usize = LONG_LENGTHS_AT + <usize>CACHE_ENTRIES * 4;
const BOUNDS_AT: usize = LONG_COUNTS_AT + <usize>CACHE_ENTRIES * 4;
const RANKS_AT: usize = BOUNDS_AT + <usize>(SMALL_PIECE_BYTES + 2) * 4;
const HEAP_AT: usize = RANKS_AT + <usize>(SMALL_PIECE_BYTES + 2) * 4;
const WINDOW_AT: usize = HEAP_AT + <usize>MAX_PIECE * 4 * 5;
const STARTS_AT: usize = WINDOW_AT + <usize>MAX_PIECE + 16;
const EXCEPTIONS_AT: usize = STARTS_AT + <usize>MAX_PIECE * 4;
const INPUT_AT: usize = EXCEPTIONS_AT + <usize>EXCEPTION_SLOTS * 8;
export const REGION_BYTES: usize = INPUT_AT + <usize>INPUT_BYTES + <usize>INPUT_PADDING;

// The tables (set once by init) and this instance's region (set by bind).
let flavour: i32 = 0;
let tokenBytes: usize = 0;
let tokenStart: usize = 0;
let tokenLength: usize = 0;
let slots: usize = 0;
let slotMask: u32 = 0;
let pairRank: usize = 0;
let shortSlots: usize = 0;
let shortMask: u32 = 0;
let shortFilter: usize = 0;
let classes: usize = 0;
let maxTokenBytes: i32 = 0;
let region: usize = 0;
let input: usize = 0;
let shortCacheUsed: u32 = 0;
let longCacheUsed: u32 = 0;

/** Where the last count() stopped, and how many exceptions it left at exceptions(). */
export let resumeAt: i32 = 0;
export let exceptionCount: i32 = 0;

export function init(
  pattern: i32,
  bytesAt: usize,
  startAt: usize,
  lengthAt: usize,
  slotsAt: usize,
  slotsMask: u32,
  pairAt: usize,
  shortAt: usize,
  shortSlotsMask: u32,
  shortFilterAt: usize,
  classesAt: usize,
  longestToken: i32,
): void {
  flavour = pattern;
  tokenBytes = bytesAt;
  tokenStart = startAt;
  tokenLength = lengthAt;
  slots = slotsAt;
  slotMask = slotsMask;
  pairRank = pairAt;
  shortSlots = shortAt;
  shortMask = shortSlotsMask;
  shortFilter = shortFilterAt;
  classes = classesAt;
  maxTokenBytes = longestToken;
}

/** Takes a zeroed region of REGION_BYTES as this instance's own; returns where input goes. */
export function bind(at: usize): usize {
  region = at;
  input = at + INPUT_AT;
  shortCacheUsed = 0;
  longCacheUsed = 0;
  return input;
}

export function exceptions(): usize {
  return region + EXCEPTIONS_AT;
}

// ---- Lookups -------------------------------------------------------------------------------

@inline function packed(p: usize, n: i32): u64 {
  return load<u64>(p) & (<u64>-1 >> (64 - 8 * <u64>n));
}

@inline function shortHash(lo: u32, hi: u32, n: u32): u32 {
  let h: u32 = ((lo ^ (n << 28)) * 0x9e3779b1) ^ (hi * 0x85ebca77);
  h = (h ^ (h >> 15)) * 0xc2b2ae3d;
  return h ^ (h >> 13);
}

/** The value stored with a packed key in a table of 16-byte slots, or NO_RANK. */
@inline function shortLookup(table: usize, mask: u32, lo: u32, hi: u32, n: u32, h: u32): i32 {
  let slot = h & mask;
  while (true) {
    const at = table + (<usize>slot << 4);
    const len = load<u32>(at, 8);
    if (len == 0) return NO_RANK;
    if (len == n && load<u32>(at) == lo && load<u32>(at, 4) == hi) return load<i32>(at, 12);
    slot = (slot + 1) & mask;
  }
}

@inline function fnv(p: usize, n: i32): u32 {
  let h: u32 = 0x811c9dc5;
  for (let i = 0; i < n; i++) h = (h ^ load<u8>(p + i)) * 0x01000193;
  return h;
}

/** Rank of the n bytes at p (n <= maxTokenBytes), hashed h, from the general table. */
function rankOfHashed(p: usize, n: i32, h: u32): i32 {
  let slot = h & slotMask;
  while (true) {
    const entry = load<i32>(slots + (<usize>slot << 2));
    if (entry == 0) return NO_RANK;
    const rank = entry - 1;
    if (<i32>load<u16>(tokenLength + (<usize>rank << 1)) == n) {
      const at = tokenBytes + <usize>load<i32>(tokenStart + (<usize>rank << 2));
      let k = 0;
      while (k < n && load<u8>(at + k) == load<u8>(p + k)) k++;
      if (k == n) return rank;
    }
    slot = (slot + 1) & slotMask;
  }
}

/** Rank of the n bytes at p, or NO_RANK. */
function rankOf(p: usize, n: i32): i32 {
  if (n >= 2 && n <= SHORT_BYTES) {
    const word = packed(p, n);
    const lo = <u32>word;
    const hi = <u32>(word >> 32);
    const h = shortHash(lo, hi, n);
    // bpe-engine.js's filter: a clear bit says no token without a look at the table.
    const bit = h >> 11;
    if ((load<u32>(shortFilter + (<usize>(bit >> 5) << 2)) & (1 << (bit & 31))) == 0) return NO_RANK;
    return shortLookup(shortSlots, shortMask, lo, hi, n, h);
  }
  if (n > maxTokenBytes) return NO_RANK;
  return rankOfHashed(p, n, fnv(p, n));
}

// ---- Merging (tiktoken's rule: merge the adjacent pair of lowest rank, leftmost first) --------

/**
 * Parts left after merging the n <= SMALL_PIECE_BYTES bytes at p, with a linear scan. Where the
 * lowest rank r comes more than once (a run), one sweep merges every pair of rank r at once.
 */
function mergeSmall(p: usize, n: i32): i32 {
  const bounds = region + BOUNDS_AT;
  const ranks = region + RANKS_AT;
  for (let i = 0; i <= n; i++) store<i32>(bounds + (<usize>i << 2), i);
  for (let i = 0; i < n - 1; i++) store<i32>(ranks + (<usize>i << 2), load<i32>(pairRank + (<usize>((<u32>load<u8>(p + i) << 8) | load<u8>(p + i + 1)) << 2)));
  let parts = n;
  while (true) {
    let min = NO_RANK;
    let at = -1;
    let again = false;
    for (let i = 0; i < parts - 1; i++) {
      const r = load<i32>(ranks + (<usize>i << 2));
      if (r < min) {
        min = r;
        at = i;
        again = false;
      } else if (r == min) again = true;
    }
    if (at < 0) return parts;
    if (again) {
      parts = sweep(p, bounds, ranks, parts, at, min);
      continue;
    }
    memory.copy(bounds + (<usize>(at + 1) << 2), bounds + (<usize>(at + 2) << 2), <usize>(parts - at - 1) << 2);
    memory.copy(ranks + (<usize>at << 2), ranks + (<usize>(at + 1) << 2), <usize>(parts - at - 2) << 2);
    parts--;
    if (at < parts - 1) {
      const from = load<i32>(bounds + (<usize>at << 2));
      store<i32>(ranks + (<usize>at << 2), rankOf(p + from, load<i32>(bounds + (<usize>(at + 2) << 2)) - from));
    }
    if (at > 0) {
      const from = load<i32>(bounds + (<usize>(at - 1) << 2));
      store<i32>(ranks + (<usize>(at - 1) << 2), rankOf(p + from, load<i32>(bounds + (<usize>(at + 1) << 2)) - from));
    }
  }
}

/**
 * mergeSmall's sweep: every pair of rank r from pair `at` on, left to right, compacting the parts
 * in place, as bpe-engine.js's mergeLong passes do (and it stops where they stop). Returns the
 * parts left.
 */
function sweep(p: usize, bounds: usize, ranks: usize, parts: i32, at: i32, r: i32): i32 {
  // Parts w and on are written over parts i and on; `last` is part w - 1's index before the sweep,
  // or -1 when the sweep made it.
  let w = at;
  let last = at - 1;
  let i = at;
  let stopped = false;
  while (i < parts) {
    const from = load<i32>(bounds + (<usize>i << 2));
    const made = i < parts - 1 && load<i32>(ranks + (<usize>i << 2)) == r;
    const old = made ? -1 : i;
    i += made ? 2 : 1;
    if (w > 0) {
      const start = load<i32>(bounds + (<usize>(w - 1) << 2));
      const rank = made || last < 0 ? rankOf(p + start, load<i32>(bounds + (<usize>i << 2)) - start) : load<i32>(ranks + (<usize>last << 2));
      store<i32>(ranks + (<usize>(w - 1) << 2), rank);
      if (rank <= r) stopped = true;
    }
    store<i32>(bounds + (<usize>w << 2), from);
    last = old;
    w++;
    // Before the next part merges in turn, the pair it breaks, which tiktoken would merge first
    // if it ranked below r.
    if (made && !stopped && i < parts - 1 && load<i32>(ranks + (<usize>i << 2)) == r) {
      if (rankOf(p + from, load<i32>(bounds + (<usize>(i + 1) << 2)) - from) <= r) stopped = true;
    }
    if (stopped) break;
  }
  if (i < parts) {
    // Stopped: the pair from the last part written, then the rest as they were.
    const start = load<i32>(bounds + (<usize>(w - 1) << 2));
    store<i32>(ranks + (<usize>(w - 1) << 2), last < 0 ? rankOf(p + start, load<i32>(bounds + (<usize>(i + 1) << 2)) - start) : load<i32>(ranks + (<usize>last << 2)));
    memory.copy(bounds + (<usize>w << 2), bounds + (<usize>i << 2), <usize>(parts - i + 1) << 2);
    memory.copy(ranks + (<usize>w << 2), ranks + (<usize>i << 2), <usize>(parts - 1 - i) << 2);
    return w + parts - i;
  }
  store<i32>(bounds + (<usize>w << 2), load<i32>(bounds + (<usize>parts << 2)));
  return w;
}

// mergeLarge's arrays, each MAX_PIECE i32s: next part, previous part, rank of the pair a part
// starts; then a tournament tree over the parts (2 * MAX_PIECE u32s).
@inline function nextOf(i: i32): usize { return region + HEAP_AT + (<usize>i << 2); }
@inline function prevOf(i: i32): usize { return region + HEAP_AT + (<usize>MAX_PIECE << 2) + (<usize>i << 2); }
@inline function rankAt(i: i32): usize { return region + HEAP_AT + (<usize>MAX_PIECE << 3) + (<usize>i << 2); }
@inline function treeAt(i: i32): usize { return region + HEAP_AT + (<usize>MAX_PIECE * 12) + (<usize>i << 2); }

/** A tree key: the pair's rank, then its part, so that the least key is tiktoken's next merge. */
@inline function keyOf(rank: i32, part: i32): u32 {
  return rank == NO_RANK ? NO_KEY : (<u32>rank << POSITION_BITS) | <u32>part;
}

/** Sets leaf `part` of a tree of `leaves` leaves and the minima above it, up to the first that stays. */
@inline function setLeaf(leaves: i32, part: i32, key: u32): void {
  let node = leaves + part;
  store<u32>(treeAt(node), key);
  while (node > 1) {
    const sibling = load<u32>(treeAt(node ^ 1));
    const least = key < sibling ? key : sibling;
    node >>= 1;
    if (load<u32>(treeAt(node)) == least) break;
    store<u32>(treeAt(node), least);
    key = least;
  }
}

/**
 * The same merge order for longer pieces, over a linked list of parts: first in passes, each merging
 * every pair of the lowest rank r along the list (bpe-engine.js's mergeLong says why that is
 * tiktoken's order; a pass stops where a merge makes a pair of rank r or lower), which take a run of
 * one character in a few sweeps; then, once passes no longer pay or one stopped, a tournament tree
 * over the parts whose every node holds the least key (rank, part) below it: the root is the next
 * merge, and a merge changes three leaves, each O(log n) with no pointer to chase, all in a few
 * cache lines (a binary heap of parts took twice the time, most of it in comparisons that read
 * ranks elsewhere).
 */
function mergeLarge(p: usize, n: i32): i32 {
  let low = NO_RANK;
  for (let i = 0; i < n; i++) {
    store<i32>(nextOf(i), i + 1);
    store<i32>(prevOf(i), i - 1);
    const r = i < n - 1 ? load<i32>(pairRank + (<usize>((<u32>load<u8>(p + i) << 8) | load<u8>(p + i + 1)) << 2)) : NO_RANK;
    store<i32>(rankAt(i), r);
    if (r < low) low = r;
  }
  let parts = n;
  // Each pass costs a step a part and earns 16 a merge, from a start of 4n.
  let budget = 4 * n;
  let stopped = false;
  while (low != NO_RANK && !stopped && budget >= parts) {
    budget -= parts;
    const r = low;
    low = NO_RANK;
    for (let part = 0; part < n; part = load<i32>(nextOf(part))) {
      let rank = load<i32>(rankAt(part));
      if (rank == r) {
        const after = load<i32>(nextOf(load<i32>(nextOf(part))));
        store<i32>(nextOf(part), after);
        if (after < n) store<i32>(prevOf(after), part);
        parts--;
        budget += 16;
        rank = after < n ? rankOf(p + part, load<i32>(nextOf(after)) - part) : NO_RANK;
        store<i32>(rankAt(part), rank);
        if (part > 0) {
          const before = load<i32>(prevOf(part));
          const left = rankOf(p + before, after - before);
          store<i32>(rankAt(before), left);
          if (left < low) low = left;
          if (left <= r) stopped = true;
        }
        if (rank <= r) stopped = true;
        if (stopped) break;
      }
      if (rank < low) low = rank;
    }
  }
  if (low == NO_RANK && !stopped) return parts;

  // Leaves for parts 0 .. n - 1 (a part merged away keeps NO_KEY), the minima above them.
  let leaves = 1;
  while (leaves < n) leaves <<= 1;
  memory.fill(treeAt(leaves), 0xff, <usize>leaves << 2);
  for (let part = 0; part < n; part = load<i32>(nextOf(part))) store<u32>(treeAt(leaves + part), keyOf(load<i32>(rankAt(part)), part));
  for (let node = leaves - 1; node >= 1; node--) {
    const a = load<u32>(treeAt(2 * node));
    const b = load<u32>(treeAt(2 * node + 1));
    store<u32>(treeAt(node), a < b ? a : b);
  }
  while (true) {
    const key = load<u32>(treeAt(1));
    if (key == NO_KEY) break;
    const part = <i32>(key & POSITION_MASK);
    const q = load<i32>(nextOf(part));
    const after = load<i32>(nextOf(q));
    store<i32>(nextOf(part), after);
    if (after < n) store<i32>(prevOf(after), part);
    parts--;
    setLeaf(leaves, q, NO_KEY);
    setLeaf(leaves, part, after < n ? keyOf(rankOf(p + part, load<i32>(nextOf(after)) - part), part) : NO_KEY);
    if (part > 0) {
      const before = load<i32>(prevOf(part));
      setLeaf(leaves, before, keyOf(rankOf(p + before, after - before), before));
    }
  }
  return parts;
}

/**
 * Merges the window's n bytes (1 <= n <= MAX_PIECE, JavaScript writes them at windowAt()) and lists
 * where its tokens start at startsAt(); returns how many there are. bpe-engine.js counts a piece longer
 * than MAX_PIECE window by window with this.
 */
export function mergeWindow(n: i32): i32 {
  const p = region + WINDOW_AT;
  const starts = region + STARTS_AT;
  const parts = mergeLarge(p, n);
  let part = 0;
  for (let i = 0; i < parts; i++) {
    store<i32>(starts + (<usize>i << 2), part);
    part = load<i32>(nextOf(part));
  }
  return parts;
}

export function windowAt(): usize {
  return region + WINDOW_AT;
}

export function startsAt(): usize {
  return region + STARTS_AT;
}

@inline function merge(p: usize, n: i32): i32 {
  return n <= SMALL_PIECE_BYTES ? mergeSmall(p, n) : mergeLarge(p, n);
}

// ---- Counting one piece ---------------------------------------------------------------------

/** Tokens of a piece of 2 to 8 bytes: the hot cache, the vocabulary, the short merge cache. */
function countShort(p: usize, n: i32): i32 {
  const word = packed(p, n);
  const lo = <u32>word;
  const hi = <u32>(word >> 32);
  const h = shortHash(lo, hi, n);
  const hot = region + HOT_AT + (<usize>(h & (HOT_SLOTS - 1)) << 4);
  if (load<u32>(hot, 8) == <u32>n && load<u32>(hot) == lo && load<u32>(hot, 4) == hi) return load<i32>(hot, 12);
  let parts = 1;
  if (shortLookup(shortSlots, shortMask, lo, hi, n, h) == NO_RANK) {
    const cache = region + SHORT_CACHE_AT;
    parts = shortLookup(cache, CACHE_SLOTS - 1, lo, hi, n, h);
    if (parts == NO_RANK) {
      parts = mergeSmall(p, n);
      if (shortCacheUsed == CACHE_ENTRIES) {
        memory.fill(cache, 0, <usize>CACHE_SLOTS << 4);
        shortCacheUsed = 0;
      }
      shortCacheUsed++;
      let slot = h & (CACHE_SLOTS - 1);
      while (load<u32>(cache + (<usize>slot << 4), 8) != 0) slot = (slot + 1) & (CACHE_SLOTS - 1);
      const at = cache + (<usize>slot << 4);
      store<u32>(at, lo);
      store<u32>(at, hi, 4);
      store<u32>(at, n, 8);
      store<i32>(at, parts, 12);
    }
  }
  store<u32>(hot, lo);
  store<u32>(hot, hi, 4);
  store<u32>(hot, n, 8);
  store<i32>(hot, parts, 12);
  return parts;
}

/** Tokens of a piece of 9 to 64 bytes: the vocabulary, then the long merge cache (full keys). */
function countCached(p: usize, n: i32): i32 {
  const h = fnv(p, n);
  if (n <= maxTokenBytes && rankOfHashed(p, n, h) != NO_RANK) return 1;
  const keys = region + LONG_KEYS_AT;
  const lengths = region + LONG_LENGTHS_AT;
  const counts = region + LONG_COUNTS_AT;
  const cacheSlots = region + LONG_SLOTS_AT;
  let slot = h & (CACHE_SLOTS - 1);
  while (true) {
    const entry = load<i32>(cacheSlots + (<usize>slot << 2));
    if (entry == 0) break;
    const e = <usize>(entry - 1);
    if (load<i32>(lengths + (e << 2)) == n && memory.compare(keys + e * <usize>CACHE_KEY_BYTES, p, n) == 0) return load<i32>(counts + (e << 2));
    slot = (slot + 1) & (CACHE_SLOTS - 1);
  }
  const parts = merge(p, n);
  if (longCacheUsed == CACHE_ENTRIES) {
    memory.fill(cacheSlots, 0, <usize>CACHE_SLOTS << 2);
    longCacheUsed = 0;
    slot = h & (CACHE_SLOTS - 1);
    while (load<i32>(cacheSlots + (<usize>slot << 2)) != 0) slot = (slot + 1) & (CACHE_SLOTS - 1);
  }
  const e = <usize>longCacheUsed;
  longCacheUsed++;
  memory.copy(keys + e * <usize>CACHE_KEY_BYTES, p, n);
  store<i32>(lengths + (e << 2), n);
  store<i32>(counts + (e << 2), parts);
  store<i32>(cacheSlots + (<usize>slot << 2), <i32>e + 1);
  return parts;
}

/** Tokens of the piece of n bytes at p, or -1 when it is too long to merge here. */
@inline function countPiece(p: usize, n: i32): i32 {
  if (n == 1) return 1;
  if (n <= SHORT_BYTES) return countShort(p, n);
  if (n <= CACHE_KEY_BYTES) return countCached(p, n);
  if (n > MAX_PIECE) return -1;
  if (rankOf(p, n) != NO_RANK) return 1;
  return merge(p, n);
}

// ---- The pre-tokenizer ----------------------------------------------------------------------

/**
 * The code point at input[i]: its byte length << 8 | its class bits; 0 for a code point beyond the
 * BMP, bytes that are not UTF-8, or a sequence cut by the end (the caller hands those to the pattern).
 */
@inline function charAt(i: i32, n: i32): u32 {
  const b0 = <u32>load<u8>(input + i);
  if (b0 < 0x80) return 0x100 | <u32>load<u8>(classes + b0);
  return wideCharAt(i, n, b0);
}

function wideCharAt(i: i32, n: i32, b0: u32): u32 {
  if (b0 < 0xc2) return 0;
  if (b0 < 0xe0) {
    if (i + 1 >= n) return 0;
    const b1 = <u32>load<u8>(input + i + 1);
    if ((b1 & 0xc0) != 0x80) return 0;
    return 0x200 | <u32>load<u8>(classes + (((b0 & 0x1f) << 6) | (b1 & 0x3f)));
  }
  if (b0 < 0xf0) {
    if (i + 2 >= n) return 0;
    const b1 = <u32>load<u8>(input + i + 1);
    const b2 = <u32>load<u8>(input + i + 2);
    if ((b1 & 0xc0) != 0x80 || (b2 & 0xc0) != 0x80) return 0;
    const cp = ((b0 & 0x0f) << 12) | ((b1 & 0x3f) << 6) | (b2 & 0x3f);
    // Overlong forms and surrogates are not UTF-8.
    if (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    return 0x300 | <u32>load<u8>(classes + cp);
  }
  return 0;
}

@inline function isP0(cls: u32): bool {
  // [^\r\n\p{L}\p{N}]
  return (cls & (NL | L | N)) == 0;
}

@inline function isP1(cls: u32): bool {
  // [^\s\p{L}\p{N}]
  return (cls & (S | L | N)) == 0;
}

/**
 * After a letter run ending at `at`: the end of an optional contraction ('s, 'T, 're, 'LL, …; tiktoken
 * matches them case-insensitively, so `'ſ`, U+017F, is one too).
 */
function contractionEnd(at: i32, n: i32): i32 {
  if (at + 1 >= n || load<u8>(input + at) != 0x27) return at;
  const x = <u32>load<u8>(input + at + 1) | 0x20;
  if (x == 0x73 || x == 0x74 || x == 0x6d || x == 0x64) return at + 2;
  if (at + 2 >= n) return at;
  if (load<u8>(input + at + 1) == 0xc5 && load<u8>(input + at + 2) == 0xbf) return at + 3;
  const y = <u32>load<u8>(input + at + 2) | 0x20;
  if ((x == 0x72 || x == 0x76) && y == 0x65) return at + 3;
  if (x == 0x6c && y == 0x6c) return at + 3;
  return at;
}

// Results of the alternatives besides a piece's end: no match, or a code point the pattern must see.
const NO_MATCH: i32 = -2;
const EXCEPTION: i32 = -1;

/**
 * o200k's `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+` (and with `upperOnly`, the
 * second alternative's `[…]+[…]*`) from s, the way a backtracking matcher settles them: the longest
 * run of U, then W from its end; else the run cut after its last W; else (second alternative) the
 * whole run. A contraction may follow.
 */
function casedEnd(s: i32, n: i32, upperOnly: bool): i32 {
  let i = s;
  let lastW = -1;
  let c: u32 = 0;
  while (i < n) {
    c = charAt(i, n);
    if (c == 0) return EXCEPTION;
    if ((c & U) == 0) break;
    i += <i32>(c >> 8);
    if ((c & W) != 0) lastW = i;
  }
  if (i < n && (c & W) != 0) {
    // The whole run, then the lower-case run after it.
    while (i < n) {
      c = charAt(i, n);
      if (c == 0) return EXCEPTION;
      if ((c & W) == 0) break;
      i += <i32>(c >> 8);
    }
    return contractionEnd(i, n);
  }
  if (lastW >= 0) return contractionEnd(lastW, n);
  if (upperOnly && i > s) return contractionEnd(i, n);
  return NO_MATCH;
}

/** The first two alternatives of o200k: an optional [^\r\n\p{L}\p{N}], then cased letters. */
function o200kLetterEnd(from: i32, n: i32, c0: u32): i32 {
  if (!isP0(c0)) return casedEnd(from, n, true);
  const after = from + <i32>(c0 >> 8);
  if (after < n) {
    const e = casedEnd(after, n, false);
    if (e != NO_MATCH) return e;
  }
  // The same without the optional character: only a mark (\p{M} is neither \p{L} nor \p{N}) can
  // begin the letter classes, and then the first alternative always matches.
  if ((c0 & (U | W)) != 0) return casedEnd(from, n, false);
  if (after < n) return casedEnd(after, n, true);
  return NO_MATCH;
}

/** cl100k's `[^\r\n\p{L}\p{N}]?\p{L}+`. */
function cl100kLetterEnd(from: i32, n: i32, c0: u32): i32 {
  let i = from;
  if ((c0 & L) == 0) {
    if (!isP0(c0)) return NO_MATCH;
    i += <i32>(c0 >> 8);
    if (i >= n) return NO_MATCH;
    const c1 = charAt(i, n);
    if (c1 == 0) return EXCEPTION;
    if ((c1 & L) == 0) return NO_MATCH;
  }
  while (i < n) {
    const c = charAt(i, n);
    if (c == 0) return EXCEPTION;
    if ((c & L) == 0) break;
    i += <i32>(c >> 8);
  }
  return i;
}

/** `\p{N}{1,3}` from a digit at from. */
function digitsEnd(from: i32, n: i32, c0: u32): i32 {
  let i = from + <i32>(c0 >> 8);
  for (let k = 1; k < 3 && i < n; k++) {
    const c = charAt(i, n);
    if (c == 0) return EXCEPTION;
    if ((c & N) == 0) break;
    i += <i32>(c >> 8);
  }
  return i;
}

/** ` ?[^\s\p{L}\p{N}]+[\r\n/]*` (cl100k: `[\r\n]*`) from a space or a symbol at from. */
function punctuationEnd(from: i32, n: i32): i32 {
  let i = load<u8>(input + from) == 0x20 ? from + 1 : from;
  const run = i;
  while (i < n) {
    const c = charAt(i, n);
    if (c == 0) return EXCEPTION;
    if (!isP1(c)) break;
    i += <i32>(c >> 8);
  }
  if (i == run) return NO_MATCH;
  while (i < n) {
    const b = load<u8>(input + i);
    if (b == 0x0a || b == 0x0d || (b == 0x2f && flavour == O200K)) i++;
    else break;
  }
  return i;
}

/**
 * Whitespace from from: `\s*[\r\n]+` up to the run's last newline, else `\s+(?!\S)` (all of a run
 * at the end of the text, else all but its last character), else `\s+` (one character).
 */
function whitespaceEnd(from: i32, n: i32, c0: u32): i32 {
  let i = from;
  let lastNewline = -1;
  let lastStart = from;
  let chars = 0;
  while (i < n) {
    const c = charAt(i, n);
    if (c == 0) return EXCEPTION;
    if ((c & S) == 0) break;
    if ((c & NL) != 0) lastNewline = i;
    lastStart = i;
    i += <i32>(c >> 8);
    chars++;
  }
  if (lastNewline >= 0) return lastNewline + 1;
  if (i == n) return i;
  return chars >= 2 ? lastStart : from + <i32>(c0 >> 8);
}

/** The end of the piece that starts at from (a piece's start), or EXCEPTION: any text. */
function unicodePieceEnd(from: i32, n: i32): i32 {
  const c0 = charAt(from, n);
  if (c0 == 0) return EXCEPTION;
  if (flavour == CL100K && load<u8>(input + from) == 0x27) {
    const e = contractionEnd(from, n);
    if (e > from) return e;
  }
  let e = flavour == O200K ? o200kLetterEnd(from, n, c0) : cl100kLetterEnd(from, n, c0);
  if (e != NO_MATCH) return e;
  if ((c0 & N) != 0) return digitsEnd(from, n, c0);
  if (load<u8>(input + from) == 0x20 || isP1(c0)) {
    e = punctuationEnd(from, n);
    if (e != NO_MATCH) return e;
  }
  return whitespaceEnd(from, n, c0);
}

@inline function isAsciiLetter(b: u32): bool {
  return ((b | 0x20) - 0x61) < 26;
}

@inline function isAsciiPunct(b: u32): bool {
  return b > 0x20 && b < 0x7f && !isAsciiLetter(b) && (b < 0x30 || b > 0x39);
}

// The same for ASCII text, byte by byte: ASCII classes are simple ranges. Each returns EXCEPTION
// where a byte beyond ASCII might change the piece, and unicodePieceEnd takes over from the start.

@inline function isAsciiDigit(b: u32): bool {
  return b - 0x30 < 10;
}

@inline function isAsciiSpace(b: u32): bool {
  return b == 0x20 || b - 0x09 < 5;
}

function asciiWhitespaceEnd(from: i32, n: i32): i32 {
  const text = input;
  let i = from;
  let lastNewline = -1;
  let b: u32 = 0;
  for (; i < n; i++) {
    b = load<u8>(text + i);
    if (!isAsciiSpace(b)) break;
    if (b == 0x0a || b == 0x0d) lastNewline = i;
  }
  if (i < n && b >= 0x80) return EXCEPTION;
  if (lastNewline >= 0) return lastNewline + 1;
  if (i == n) return i;
  return i - from >= 2 ? i - 1 : from + 1;
}

function asciiPunctuationEnd(from: i32, n: i32): i32 {
  const text = input;
  let i = load<u8>(text + from) == 0x20 ? from + 1 : from;
  const run = i;
  let b: u32 = 0;
  for (; i < n; i++) {
    b = load<u8>(text + i);
    if (b >= 0x80 || isAsciiSpace(b) || isAsciiLetter(b) || isAsciiDigit(b)) break;
  }
  if (i < n && b >= 0x80) return EXCEPTION;
  if (i == run) return asciiWhitespaceEnd(from, n);
  for (; i < n; i++) {
    b = load<u8>(text + i);
    if (!(b == 0x0a || b == 0x0d || (b == 0x2f && flavour == O200K))) break;
  }
  return i;
}

function asciiPieceEnd(from: i32, n: i32): i32 {
  const text = input;
  const first = <u32>load<u8>(text + from);
  if (flavour == CL100K && first == 0x27) {
    const e = contractionEnd(from, n);
    if (e > from) return e;
  }
  let at = from;
  if (!isAsciiLetter(first)) {
    if (isAsciiDigit(first)) {
      const last = from + 3 < n ? from + 3 : n;
      let i = from + 1;
      for (; i < last; i++) {
        const b = <u32>load<u8>(text + i);
        if (b >= 0x80) return EXCEPTION;
        if (!isAsciiDigit(b)) break;
      }
      return i;
    }
    if (first == 0x0a || first == 0x0d) return asciiWhitespaceEnd(from, n);
    at = from + 1;
    if (at == n) return n;
    const next = <u32>load<u8>(text + at);
    if (next >= 0x80) return EXCEPTION;
    if (!isAsciiLetter(next)) return first == 0x20 || !isAsciiSpace(first) ? asciiPunctuationEnd(from, n) : asciiWhitespaceEnd(from, n);
  }
  let i = at;
  let b: u32 = 0;
  if (flavour == O200K) {
    for (; i < n; i++) {
      b = load<u8>(text + i);
      if (b - 0x41 >= 26) break;
    }
    for (; i < n; i++) {
      b = load<u8>(text + i);
      if (b - 0x61 >= 26) break;
    }
    if (i < n && b >= 0x80) return EXCEPTION;
    return b == 0x27 ? contractionEnd(i, n) : i;
  }
  for (; i < n; i++) {
    b = load<u8>(text + i);
    if (!isAsciiLetter(b)) break;
  }
  return i < n && b >= 0x80 ? EXCEPTION : i;
}

@inline function pieceEnd(from: i32, n: i32): i32 {
  if (load<u8>(input + from) < 0x80) {
    const e = asciiPieceEnd(from, n);
    if (e >= 0) return e;
  }
  return unicodePieceEnd(from, n);
}

/** bpe-engine.js's isPieceBoundary: both patterns always end a piece right before input[j]. */
function isPieceBoundary(j: i32, n: i32): bool {
  const at = <u32>load<u8>(input + j);
  if (at == 0x20) return j + 1 < n && isAsciiLetter(load<u8>(input + j + 1));
  const before = <u32>load<u8>(input + j - 1);
  if (isAsciiLetter(before)) return at != 0x27 && isAsciiPunct(at);
  return before == 0x0a && at > 0x20 && at < 0x7f && at != 0x2f;
}

@inline function exception(from: i32, to: i32): void {
  const at = region + EXCEPTIONS_AT + (<usize>exceptionCount << 3);
  store<i32>(at, from);
  store<i32>(at, to, 4);
  exceptionCount++;
}

/**
 * Counts the pieces of input[from, n) (n <= INPUT_BYTES; from a piece's start) and returns their
 * tokens. What it cannot count it lists at exceptions(): `[from, to]` for a piece too long to
 * merge here, `[from, -to]` for a stretch the pattern must count. It stops early when that list is
 * full; resumeAt says where.
 */
export function count(from: i32, n: i32): i32 {
  let total = 0;
  exceptionCount = 0;
  while (from < n && exceptionCount < EXCEPTION_SLOTS) {
    const to = pieceEnd(from, n);
    if (to < 0) {
      let next = from + 1;
      while (next < n && !isPieceBoundary(next, n)) next++;
      exception(from, -next);
      from = next;
      continue;
    }
    const tokens = countPiece(input + from, to - from);
    if (tokens < 0) exception(from, to);
    else total += tokens;
    from = to;
  }
  resumeAt = from;
  return total;
}
