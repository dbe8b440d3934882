// Git's glob matcher (`wildmatch`, as git 2.39 runs it for ignore files), on bytes, in time
// proportional to pattern × text at worst.
//
// Git matches by backtracking: every `*` tries each place the rest of the pattern could start,
// and a few early exits ("abort" results) prune the search. Patterns with several `**` still take
// exponential time (`a/**/a/**/…/b` against `a/a/a/…/c`). Here the pattern is compiled to tokens
// once and the same search runs with git's own result codes, so it answers exactly as git does,
// early exits included. It first runs as git runs it, which is quickest for real patterns; past
// a few steps per (token, position) pair it starts over remembering the result of each star at
// each position, so that no (star, position) pair is worked out twice.

/** Result codes of one step of the search, as git's matcher has them. */
const MATCH = 0;
const NOMATCH = 1;
/** The text ran out: no later position of any enclosing star can match either. */
const ABORT_ALL = 2;
/** A single `*` met a `/`: enclosing single stars give up, an enclosing `**` goes on. */
const ABORT_TO_STARSTAR = 3;

const SLASH = 0x2f;
const BACKSLASH = 0x5c;
const STAR = 0x2a;

const T_BYTE = 0; // one byte; 256 never matches (a trailing backslash)
const T_ANY = 1; // `?`
const T_CLASS = 2; // `[...]`, value: index into classes
const T_STAR = 3; // a run of `*`, value: index of the star run
const T_ABORT = 4; // a malformed `[...]`: the search ends here, never matching
const T_END = 5;

/** Star runs beyond this are solved bottom-up (no recursion per star), to bound stack depth. */
const MAX_NESTED_STARS = 64;

export interface Glob {
  /** `/` is special (`*`, `?` and `[...]` do not match it): git's WM_PATHNAME. */
  readonly pathname: boolean;
  readonly kinds: Uint8Array;
  readonly values: Int32Array;
  /** Bracket expressions: 256 bits (8 words) each. */
  readonly classes: Int32Array;
  /** Per star run: the token after it. */
  readonly starNext: Int32Array;
  /** Per star run: S_* flags. */
  readonly starFlags: Uint8Array;
  /** Per star run: the literal byte that must follow what the star matches, or -1. */
  readonly starLiteral: Int32Array;
  /** Bytes every matching text starts with (those before anything else), a cheap first test. */
  readonly prefix: Int32Array;
  /** Bytes every matching text ends with (those after the last star), a cheap first test. */
  readonly suffix: Int32Array;
  /** No shorter text matches: a pattern longer than any path is turned down at once. */
  readonly minLength: number;
}

/** The star may match `/`. */
const S_MATCH_SLASH = 1;
/** `**` followed by `/`: first try matching no folder at all. */
const S_ZERO_FOLDERS = 2;
/** Nothing follows the star. */
const S_AT_END = 4;
/** A single star followed by `/`: it takes the rest of the current name. */
const S_TO_SLASH = 8;

// ASCII classes as git defines them (its own locale-independent table, not the C library's):
// `space` is tab, newline, carriage return and space; nothing at or above 0x80 is in any class.
const CLASS_TESTS: ReadonlyMap<string, (c: number) => boolean> = new Map([
  ['alnum', (c: number) => isAlpha(c) || isDigit(c)],
  ['alpha', isAlpha],
  ['blank', (c: number) => c === 0x20 || c === 0x09],
  ['cntrl', (c: number) => c < 0x20 || c === 0x7f],
  ['digit', isDigit],
  ['graph', (c: number) => c > 0x20 && c < 0x7f],
  ['lower', (c: number) => c >= 0x61 && c <= 0x7a],
  ['print', (c: number) => c >= 0x20 && c < 0x7f],
  ['punct', (c: number) => c > 0x20 && c < 0x7f && !isAlpha(c) && !isDigit(c)],
  ['space', (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d],
  ['upper', (c: number) => c >= 0x41 && c <= 0x5a],
  ['xdigit', (c: number) => isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66)],
]);

function isAlpha(c: number): boolean {
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

/** The longest `[:name:]` git knows. */
const LONGEST_CLASS_NAME = 6;

/**
 * Reads the bracket expression starting at `open` (the `[`) into `set` (256 bits). Returns the
 * index after its `]`, or -1 when git would give up on it (no closing `]`, a trailing backslash,
 * an unknown `[:class:]`): such a pattern matches nothing. `closeAfter(i)` is the first `]` at
 * or after `i`, so that a run of `[:` without `:]` is not read again and again.
 */
function readClass(pat: Uint8Array, open: number, set: Int32Array, closeAfter: (i: number) => number): number {
  const at = (i: number): number => (i < pat.length ? (pat[i] as number) : 0);
  const add = (c: number): void => {
    set[c >>> 5] = (set[c >>> 5] as number) | (1 << (c & 31));
  };
  let p = open + 1;
  let ch = at(p);
  const negated = ch === 0x21 || ch === 0x5e; // `!` or `^`
  if (negated) ch = at(++p);
  let prev = 0;
  do {
    if (ch === 0) return -1;
    if (ch === BACKSLASH) {
      ch = at(++p);
      if (ch === 0) return -1;
      add(ch);
    } else if (ch === 0x2d && prev !== 0 && at(p + 1) !== 0 && at(p + 1) !== 0x5d) {
      // `-` between two bytes: a range (an escaped upper bound counts as its byte).
      ch = at(++p);
      if (ch === BACKSLASH) {
        ch = at(++p);
        if (ch === 0) return -1;
      }
      for (let c = prev; c <= ch; c += 1) add(c);
      ch = 0; // a range cannot start where one ends
    } else if (ch === 0x5b && at(p + 1) === 0x3a) {
      // `[:name:]`
      const start = p + 2;
      p = closeAfter(start);
      if (p < 0) return -1;
      const len = p - start - 1;
      if (len < 0 || at(p - 1) !== 0x3a) {
        // No `:]`: the `[` is an ordinary member and reading resumes after it.
        p = start - 2;
        ch = 0x5b;
        add(ch);
      } else {
        const name = len > LONGEST_CLASS_NAME ? '' : String.fromCharCode(...pat.subarray(start, start + len));
        const test = CLASS_TESTS.get(name);
        if (test === undefined) return -1;
        for (let c = 0; c < 256; c += 1) if (test(c)) add(c);
        ch = 0;
      }
    } else {
      add(ch);
    }
    prev = ch;
    ch = at(++p);
  } while (ch !== 0x5d);
  if (negated) for (let w = 0; w < 8; w += 1) set[w] = ~(set[w] as number);
  return p + 1;
}

/**
 * Compiles a glob. `pathname`: `/` is special, as for patterns holding a slash in an ignore file;
 * otherwise (a pattern matched against a name alone) `*` and `**` are the same.
 */
export function compileGlob(pat: Uint8Array, pathname: boolean): Glob {
  // At most one token per byte, and the end.
  const kinds = new Uint8Array(pat.length + 1);
  const values = new Int32Array(pat.length + 1);
  const raw = new Uint8Array(pat.length + 1);
  let tokens = 0;
  /** Class sets, 8 words each; equal ones are stored once. */
  const classWords: number[] = [];
  const classIndex = new Map<string, number>();
  /** Per star run: its token, the offset of its first `*`, its length. */
  const runToken = new Int32Array(pat.length);
  const runFirst = new Int32Array(pat.length);
  const runLength = new Int32Array(pat.length);
  let starCount = 0;
  const push = (kind: number, value: number, isRaw: boolean): void => {
    kinds[tokens] = kind;
    values[tokens] = value;
    raw[tokens] = isRaw ? 1 : 0;
    tokens += 1;
  };
  let closes: Int32Array | null = null;
  const closeAfter = (from: number): number => {
    if (closes === null) {
      closes = new Int32Array(pat.length + 1).fill(-1);
      for (let k = pat.length - 1; k >= 0; k -= 1) closes[k] = pat[k] === 0x5d ? k : (closes[k + 1] as number);
    }
    return from < pat.length ? (closes[from] as number) : -1;
  };
  const set = new Int32Array(8);
  let i = 0;
  while (i < pat.length) {
    const c = pat[i] as number;
    if (c === BACKSLASH) {
      push(T_BYTE, i + 1 < pat.length ? (pat[i + 1] as number) : 256, false);
      i += 2;
    } else if (c === 0x3f) {
      push(T_ANY, 0, false);
      i += 1;
    } else if (c === STAR) {
      let j = i;
      while (j < pat.length && pat[j] === STAR) j += 1;
      runToken[starCount] = tokens;
      runFirst[starCount] = i;
      runLength[starCount] = j - i;
      push(T_STAR, starCount, false);
      starCount += 1;
      i = j;
    } else if (c === 0x5b) {
      set.fill(0);
      const after = readClass(pat, i, set, closeAfter);
      if (after < 0) {
        push(T_ABORT, 0, false);
        break;
      }
      const key = set.join(',');
      let index = classIndex.get(key);
      if (index === undefined) {
        index = classIndex.size;
        classIndex.set(key, index);
        classWords.push(...set);
      }
      push(T_CLASS, index, false);
      i = after;
    } else {
      push(T_BYTE, c, true);
      i += 1;
    }
  }
  push(T_END, 0, false);

  const starNext = new Int32Array(starCount);
  const starFlags = new Uint8Array(starCount);
  const starLiteral = new Int32Array(starCount);
  let zeroFolderRuns = 0;
  for (let s = 0; s < starCount; s += 1) {
    const next = (runToken[s] as number) + 1;
    const first = runFirst[s] as number;
    const nextKind = kinds[next] as number;
    const nextSlash = nextKind === T_BYTE && values[next] === SLASH;
    const nextRawSlash = nextSlash && raw[next] === 1;
    let matchSlash: boolean;
    let zeroFolders = false;
    if (runLength[s] === 1 || !pathname) {
      matchSlash = !pathname;
    } else {
      // `**` spans folders only as a whole name: at the start or after `/`, and before `/` or
      // the end. Anywhere else it is a single `*`. (The start is the start of the text git
      // hands the matcher, after the leading literal part of a path pattern is cut off.)
      matchSlash = (first === 0 || pat[first - 1] === SLASH) && (nextKind === T_END || nextSlash);
      zeroFolders = matchSlash && nextRawSlash;
    }
    if (zeroFolders) zeroFolderRuns += 1;
    starNext[s] = next;
    starFlags[s] =
      (matchSlash ? S_MATCH_SLASH : 0) |
      (zeroFolders ? S_ZERO_FOLDERS : 0) |
      (nextKind === T_END ? S_AT_END : 0) |
      (!matchSlash && nextRawSlash ? S_TO_SLASH : 0);
    // Git skips ahead to the next place this byte occurs (only for an unescaped one).
    starLiteral[s] = nextKind === T_BYTE && raw[next] === 1 ? (values[next] as number) : -1;
  }

  let prefixTo = 0;
  while (kinds[prefixTo] === T_BYTE) prefixTo += 1;
  // The bytes after the last star run are matched one for one against the end of the text (a
  // `**/` that matches no folder skips its `/`).
  let suffixFrom = tokens - 1;
  while (suffixFrom > 0 && kinds[suffixFrom - 1] === T_BYTE) suffixFrom -= 1;
  if (
    starCount > 0 &&
    (starFlags[starCount - 1] as number) & S_ZERO_FOLDERS &&
    suffixFrom === starNext[starCount - 1]
  ) {
    suffixFrom += 1;
  }

  return {
    pathname,
    kinds: kinds.slice(0, tokens),
    values: values.slice(0, tokens),
    classes: Int32Array.from(classWords),
    starNext,
    starFlags,
    starLiteral,
    prefix: values.slice(0, prefixTo),
    suffix: values.slice(suffixFrom, tokens - 1),
    // Every token but a star takes one byte, bar the `/` a `**/` matching no folder skips.
    minLength: tokens - 1 - starCount - zeroFolderRuns,
  };
}

/** Returned up the search when the memo-free first attempt has used up its steps. */
const OVER_BUDGET = 4;
/** Steps of the memo-free attempt per (token, position) pair before it starts over with the memo. */
const BUDGET_PER_STATE = 4;

// The match in progress. Matching is synchronous and never re-entered, so one serves; hot
// functions copy what they use into locals.
class MatchState {
  glob: Glob = compileGlob(new Uint8Array(0), false);
  text: Uint8Array = new Uint8Array(0);
  start = 0;
  end = 0;
  /** Steps (tokens, star entries, star loop turns) left before the memo-free attempt gives up. */
  budget = 0;
  memoOn = false;
  deep = false;
  /** More than one star run: `/` positions come from `slashes`. */
  slashTable = false;
  /** Memo entries are `gen << 3 | code + 1`: a new match invalidates them all without clearing. */
  memo: Int32Array = new Int32Array(0);
  gen = 0;
  stride = 0;
  /** Where the next `/` is, from each position: looked up rather than searched for again. */
  slashes: Int32Array = new Int32Array(0);
  slashesReady = false;
}

const m = new MatchState();

function nextSlash(t: number): number {
  const bytes = m.text;
  const to = m.end;
  if (!m.slashTable) {
    for (let i = t; i < to; i += 1) if (bytes[i] === SLASH) return i;
    return -1;
  }
  if (!m.slashesReady) {
    let next = -1;
    for (let i = to - 1; i >= m.start; i -= 1) {
      if (bytes[i] === SLASH) next = i;
      m.slashes[i - m.start] = next;
    }
    m.slashesReady = true;
  }
  return t < to ? (m.slashes[t - m.start] as number) : -1;
}

/** Memo row of the star run's result at each position (`E`), then of its loop (`L`). */
function entryRow(s: number): number {
  return m.deep ? (s & 1) * m.stride : 2 * s * m.stride;
}

function loopRow(s: number): number {
  return m.deep ? 2 * m.stride : (2 * s + 1) * m.stride;
}

/** Matches tokens from `from` against text from `t`, up to the next star run or the end. */
function matchFrom(from: number, t: number): number {
  const { kinds: tokens, values: vals, classes, pathname } = m.glob;
  const bytes = m.text;
  const to = m.end;
  let k = from;
  let result: number;
  for (;;) {
    const kind = tokens[k];
    if (kind === T_BYTE) {
      if (t === to) {
        result = ABORT_ALL;
        break;
      }
      if (bytes[t] !== vals[k]) {
        result = NOMATCH;
        break;
      }
    } else if (kind === T_STAR) {
      m.budget -= k - from;
      return matchStar(vals[k] as number, t);
    } else if (kind === T_END) {
      result = t === to ? MATCH : NOMATCH;
      break;
    } else if (t === to) {
      result = ABORT_ALL;
      break;
    } else if (kind === T_ANY) {
      if (pathname && bytes[t] === SLASH) {
        result = NOMATCH;
        break;
      }
    } else if (kind === T_CLASS) {
      const c = bytes[t] as number;
      if (
        (((classes[((vals[k] as number) << 3) | (c >>> 5)] as number) >>> (c & 31)) & 1) === 0 ||
        (pathname && c === SLASH)
      ) {
        result = NOMATCH;
        break;
      }
    } else {
      result = ABORT_ALL;
      break;
    }
    k += 1;
    t += 1;
  }
  m.budget -= k - from;
  return result;
}

function matchStar(s: number, t: number): number {
  if (!m.memoOn) return --m.budget < 0 ? OVER_BUDGET : starUncached(s, t);
  const index = entryRow(s) + t - m.start;
  const known = m.memo[index] as number;
  if (known >>> 3 === m.gen) return (known & 7) - 1;
  const result = starUncached(s, t);
  m.memo[index] = (m.gen << 3) | (result + 1);
  return result;
}

function starUncached(s: number, t: number): number {
  const flags = m.glob.starFlags[s] as number;
  const next = m.glob.starNext[s] as number;
  if (flags & S_ZERO_FOLDERS) {
    const none = matchFrom(next + 1, t);
    if (none === MATCH || none === OVER_BUDGET) return none;
  }
  if (flags & S_AT_END) return !(flags & S_MATCH_SLASH) && nextSlash(t) >= 0 ? NOMATCH : MATCH;
  if (flags & S_TO_SLASH) {
    const slash = nextSlash(t);
    return slash < 0 ? NOMATCH : matchFrom(next + 1, slash + 1);
  }
  return starLoop(s, t);
}

/**
 * The star takes one more byte at a time until the rest matches. Every position the loop passes
 * has the loop's final result (each step either moves on or decides), so all are remembered.
 */
function starLoop(s: number, from: number): number {
  const { starNext, starFlags, starLiteral } = m.glob;
  const next = starNext[s] as number;
  const matchSlash = ((starFlags[s] as number) & S_MATCH_SLASH) !== 0;
  const literal = starLiteral[s] as number;
  const bytes = m.text;
  const to = m.end;
  const remember = m.memoOn;
  const table = m.memo;
  const stamp = m.gen;
  const row = remember ? loopRow(s) - m.start : 0;
  let t = from;
  let result: number;
  for (;;) {
    if (t === to) {
      result = ABORT_ALL;
      break;
    }
    if (remember) {
      const known = table[row + t] as number;
      if (known >>> 3 === stamp) {
        result = (known & 7) - 1;
        break;
      }
    } else if (--m.budget < 0) {
      return OVER_BUDGET;
    }
    const c = bytes[t] as number;
    if (literal >= 0 && c !== literal) {
      // Skipping ahead to the literal that must come next, not past a `/` for a single star.
      if (!matchSlash && c === SLASH) {
        result = NOMATCH;
        break;
      }
      t += 1;
      if (t === to) {
        result = NOMATCH;
        break;
      }
      continue;
    }
    const rest = matchFrom(next, t);
    if (rest !== NOMATCH) {
      if (!matchSlash || rest !== ABORT_TO_STARSTAR) {
        result = rest;
        break;
      }
    } else if (!matchSlash && c === SLASH) {
      result = ABORT_TO_STARSTAR;
      break;
    }
    t += 1;
  }
  if (remember) {
    const value = (stamp << 3) | (result + 1);
    for (let i = from; i <= t && i < to; i += 1) table[row + i] = value;
  }
  return result;
}

const AUTO = 0;
const MEMO = 1;
const BOTTOM_UP = 2;

function resultCode(glob: Glob, bytes: Uint8Array, from: number, to: number, mode: number): number {
  m.glob = glob;
  m.text = bytes;
  m.start = from;
  m.end = to;
  const starCount = m.glob.starNext.length;
  m.deep = mode === BOTTOM_UP || starCount > MAX_NESTED_STARS;
  m.stride = to - from + 1;
  m.slashTable = starCount > 1;
  m.slashesReady = false;
  if (m.slashTable && m.slashes.length < m.stride) m.slashes = new Int32Array(Math.max(m.stride, m.slashes.length * 2));
  if (starCount <= 1 || (mode === AUTO && !m.deep)) {
    // Git's search as it is, which is quick for all but contrived patterns; if it takes more
    // steps than the memo would need, it starts over with the memo. A single star run cannot
    // meet the same (star, position) twice, so it never needs one.
    m.memoOn = false;
    m.budget = starCount <= 1 ? Infinity : BUDGET_PER_STATE * m.glob.kinds.length * m.stride;
    const result = matchFrom(0, from);
    if (result !== OVER_BUDGET) return result;
  }
  m.memoOn = true;
  m.budget = Infinity;
  const size = (m.deep ? 3 : 2 * starCount) * m.stride;
  if (m.memo.length < size) m.memo = new Int32Array(Math.max(size, m.memo.length * 2));
  m.gen += 1;
  if (m.gen >= 1 << 28) {
    m.memo.fill(0);
    m.gen = 1;
  }
  if (m.deep) {
    // Last star first, every position: each star then only looks up the next one's results,
    // however many there are, without a call per star on the stack.
    for (let s = starCount - 1; s >= 0; s -= 1) {
      m.memo.fill(0, entryRow(s), entryRow(s) + m.stride);
      m.memo.fill(0, loopRow(s), loopRow(s) + m.stride);
      for (let t = to; t >= from; t -= 1) matchStar(s, t);
    }
  }
  return matchFrom(0, from);
}

/** Whether the glob matches bytes `from`..`to` of `bytes`. */
export function globMatches(glob: Glob, bytes: Uint8Array, from: number, to: number): boolean {
  const { prefix, suffix } = glob;
  if (glob.minLength > to - from) return false;
  for (let i = 0; i < prefix.length; i += 1) if (bytes[from + i] !== prefix[i]) return false;
  for (let i = suffix.length - 1, t = to - 1; i >= 0; i -= 1, t -= 1) if (bytes[t] !== suffix[i]) return false;
  return resultCode(glob, bytes, from, to, AUTO) === MATCH;
}

const GIT_CODES = [0, 1, -1, -2];

/**
 * For tests: git's own result code for the whole text (0 match, 1 no match, -1 and -2 the two
 * aborts), found the usual way, with the memo from the start, or bottom-up as for long patterns.
 */
export function globResultCode(glob: Glob, bytes: Uint8Array, mode: 'auto' | 'memo' | 'bottom-up' = 'auto'): number {
  const how = mode === 'auto' ? AUTO : mode === 'memo' ? MEMO : BOTTOM_UP;
  return GIT_CODES[resultCode(glob, bytes, 0, bytes.length, how)] as number;
}
