import { Buffer } from 'node:buffer';
import { escapeJsonInto, MAX_ESCAPED_BYTES } from '../render/json-string.js';
import { isPieceBoundary } from '../tokens/bpe-engine.js';
import type { CountTokens } from '../tokens/token-pool.js';
import { countLeading } from '../sorted-search.js';

/** A stretch of a part's text; `tokens` is the exact count of `bytes` alone, when already known. */
export interface Segment {
  bytes: Uint8Array;
  tokens?: number;
}

/**
 * The exact token count of text assembled piece by piece, without counting it whole again. BPE
 * counts do not add up across a concatenation in general, but they do at a place where both
 * encodings' pre-tokenizers always end a piece (isPieceBoundary: decided by the bytes on either
 * side, so a place proven inside one segment is proven in the assembled text too). So a segment
 * whose count is known adds that count between its first and last such place, and only the
 * bytes around each junction (`open`: everything after the last proven place) are counted here.
 */
export interface Tally {
  /** Tokens of the text up to the start of `open`, which is a proven piece boundary. */
  committed: number;
  open: Uint8Array;
}

export const EMPTY_TALLY: Tally = { committed: 0, open: new Uint8Array(0) };

/** Segments shorter than this just join the open bytes. */
const SMALL = 64;

export type CountUtf8 = (bytes: Uint8Array) => number;

function firstBoundary(bytes: Uint8Array): number {
  for (let j = 1; j < bytes.length; j++) if (isPieceBoundary(bytes, j)) return j;
  return -1;
}

function lastBoundary(bytes: Uint8Array): number {
  for (let j = bytes.length - 1; j > 0; j--) if (isPieceBoundary(bytes, j)) return j;
  return -1;
}

/** `tally` with `segments` appended; `tally` itself is not changed. */
export function extendTally(tally: Tally, segments: readonly Segment[], count: CountUtf8): Tally {
  let committed = tally.committed;
  let open: Uint8Array[] = [tally.open];
  for (const { bytes, tokens } of segments) {
    if (bytes.length === 0) continue;
    const first = bytes.length < SMALL ? -1 : firstBoundary(bytes);
    if (first < 0) {
      open.push(bytes);
      continue;
    }
    const last = lastBoundary(bytes);
    const head = bytes.subarray(0, first);
    const rest = bytes.subarray(last);
    committed += count(Buffer.concat([...open, head]));
    committed += tokens === undefined ? count(bytes.subarray(first, last)) : tokens - count(head) - count(rest);
    open = [rest];
  }
  let joined: Uint8Array = open.length === 1 ? (open[0] as Uint8Array) : Buffer.concat(open);
  const settle = lastBoundary(joined);
  if (settle > 0) {
    committed += count(joined.subarray(0, settle));
    // A copy: the open bytes must not keep a whole content alive.
    joined = Uint8Array.prototype.slice.call(joined, settle);
  }
  return { committed, open: joined };
}

/** The count of the tallied text followed by `suffix`. */
export function tallyTotal(tally: Tally, suffix: Uint8Array, count: CountUtf8): number {
  return tally.committed + count(suffix.length === 0 ? tally.open : Buffer.concat([tally.open, suffix]));
}

/** Whether a text ending in `before` and one starting with `after` add up (a proven boundary between them). */
export function joinsCleanly(before: Uint8Array, after: Uint8Array): boolean {
  if (before.length === 0 || after.length === 0) return true;
  const probe = Buffer.concat([before.subarray(-1), after.subarray(0, 2)]);
  return isPieceBoundary(probe, 1);
}

/** Proven boundaries are marked at most this often, in bytes. */
const MARK_EVERY = 2048;

/** Places about MARK_EVERY bytes apart where a piece always ends, and the tokens before each. */
export interface RangeMarks {
  marks: number[];
  sums: number[];
}

/** Where the marks of `bytes` go: 0, proven boundaries about MARK_EVERY bytes apart, its length. */
function markPlaces(bytes: Uint8Array): number[] {
  const marks = [0];
  for (let j = MARK_EVERY; j < bytes.length; j++) {
    if (!isPieceBoundary(bytes, j)) continue;
    marks.push(j);
    j += MARK_EVERY - 1;
  }
  if ((marks.at(-1) as number) < bytes.length) marks.push(bytes.length);
  return marks;
}

const stretchesAt = (bytes: Uint8Array, marks: number[]): Uint8Array[] =>
  marks.slice(1).map((end, i) => bytes.subarray(marks[i], end));

function withSums(marks: number[], counts: ArrayLike<number>): RangeMarks {
  const sums = [0];
  for (let i = 0; i < counts.length; i++) sums.push((sums.at(-1) as number) + (counts[i] as number));
  return { marks, sums };
}

/**
 * The marks of `bytes`: the stretches between proven boundaries are counted by `countBatch` (the
 * token threads, several stretches at once) or one by one by `count`.
 */
export async function rangeMarks(
  bytes: Uint8Array,
  count: CountUtf8,
  countBatch?: (contents: Uint8Array[]) => Promise<number[]> | number[],
): Promise<RangeMarks> {
  const marks = markPlaces(bytes);
  const stretches = stretchesAt(bytes, marks);
  return withSums(marks, countBatch ? await countBatch(stretches) : stretches.map(count));
}

/**
 * `count` that counts each content of more than `over` bytes stretch by stretch (with
 * `countStretches`): its count is the sum, and the marks a cut of it needs come with it, into
 * `found` (by content). A scan in parts counts with it, so a file too big for a part is not
 * counted a second time to be cut.
 */
export function countingMarks(
  count: CountTokens,
  countStretches: CountTokens,
  over: number,
  found: WeakMap<Uint8Array, RangeMarks>,
): CountTokens {
  return async (contents, signal) => {
    const whole: Uint8Array[] = [];
    const stretches: Uint8Array[] = [];
    const places = contents.map((content) => {
      if (content.length <= over) {
        whole.push(content);
        return null;
      }
      const marks = markPlaces(content);
      stretches.push(...stretchesAt(content, marks));
      return marks;
    });
    const [wholeCounts, stretchCounts] = await Promise.all([
      whole.length > 0 ? count(whole, signal) : [],
      stretches.length > 0 ? countStretches(stretches, signal) : [],
    ]);
    let nextWhole = 0;
    let nextStretch = 0;
    return contents.map((content, i) => {
      const marks = places[i];
      if (!marks) return wholeCounts[nextWhole++] as number;
      const n = marks.length - 1;
      const result = withSums(marks, stretchCounts.slice(nextStretch, nextStretch + n));
      nextStretch += n;
      found.set(content, result);
      return result.sums.at(-1) as number;
    });
  };
}

/**
 * Exact counts of any stretch of one text, each for about two short counts: the text is counted
 * once, stretch by stretch between proven boundaries about MARK_EVERY bytes apart (rangeMarks),
 * and a range's count is the marks' difference plus its two ends counted on their own. What
 * cutting a large file into parts asks many times over, for many candidate ends.
 */
export class RangeCounter {
  private readonly marks: number[];
  private readonly sums: number[];

  constructor(
    private readonly bytes: Uint8Array,
    private readonly count: CountUtf8,
    { marks, sums }: RangeMarks,
  ) {
    this.marks = marks;
    this.sums = sums;
  }

  /**
   * Tokens of bytes[from, to) alone; undefined when no two marks lie in it, as the count would be
   * of all of it, which whoever needs it does no slower (a tally needs no count of bytes without a
   * proven boundary).
   */
  range(from: number, to: number): number | undefined {
    const a = this.firstMarkAtOrAfter(from);
    const b = this.lastMarkAtOrBefore(to);
    if (a < 0 || b < 0 || (this.marks[a] as number) >= (this.marks[b] as number)) return undefined;
    return (
      this.count(this.bytes.subarray(from, this.marks[a])) +
      (this.sums[b] as number) -
      (this.sums[a] as number) +
      this.count(this.bytes.subarray(this.marks[b], to))
    );
  }

  private firstMarkAtOrAfter(at: number): number {
    const first = countLeading(this.marks.length, (k) => (this.marks[k] as number) < at);
    return first < this.marks.length ? first : -1;
  }

  private lastMarkAtOrBefore(at: number): number {
    return countLeading(this.marks.length, (k) => (this.marks[k] as number) <= at) - 1;
  }
}

/** A text as a part shows it, and where each byte of the text lands in what is shown. */
export interface ShownForm {
  readonly bytes: Uint8Array;
  offset(raw: number): number;
}

/**
 * Pieces of a text in the form a part shows it (JSON-escaped, say), each with its exact count
 * once `prepare` has counted the shown form once (RangeCounter): cutting a long text then costs
 * two short counts per candidate end instead of a count of the whole candidate.
 */
export class ShownText {
  private form: ShownForm | undefined;
  private ranges: RangeCounter | undefined;

  /** `tokens`: the count of the whole shown form, when already known. */
  constructor(
    private readonly text: Uint8Array,
    private readonly show: (text: Uint8Array) => ShownForm,
    private readonly tokens?: number,
  ) {}

  private get shown(): ShownForm {
    return (this.form ??= this.show(this.text));
  }

  /** The shown form of text[from, to), less its last `trim` bytes; its count when known. */
  piece(from: number, to: number, trim = 0): Segment {
    const start = this.shown.offset(from);
    const end = this.shown.offset(to) - trim;
    const whole = start === 0 && end === this.shown.bytes.length;
    return {
      bytes: this.shown.bytes.subarray(start, end),
      tokens: whole && this.tokens !== undefined ? this.tokens : this.ranges?.range(start, end),
    };
  }

  /** Counts the shown form once; `marks` may already be known. */
  async prepare(count: CountUtf8, marks: (bytes: Uint8Array) => Promise<RangeMarks>): Promise<void> {
    this.ranges ??= new RangeCounter(this.shown.bytes, count, await marks(this.shown.bytes));
  }
}

/** Lines joined as a JSON array's rows: every line break followed by a comma. */
export class CommaLines implements ShownForm {
  readonly bytes: Uint8Array;
  /** Where each line break is in the text. */
  private readonly breaks: number[] = [];

  constructor(text: Uint8Array) {
    for (let i = text.indexOf(0x0a); i >= 0; i = text.indexOf(0x0a, i + 1)) this.breaks.push(i);
    const bytes = new Uint8Array(text.length + this.breaks.length);
    let from = 0;
    this.breaks.forEach((at, k) => {
      bytes.set(text.subarray(from, at + 1), from + k);
      bytes[at + 1 + k] = 0x2c;
      from = at + 1;
    });
    bytes.set(text.subarray(from), from + this.breaks.length);
    this.bytes = bytes;
  }

  offset(raw: number): number {
    return raw + countLeading(this.breaks.length, (k) => (this.breaks[k] as number) < raw);
  }
}

/** Bytes each UTF-8 byte takes in a JSON string literal, as the JSON writer escapes it. */
const ESCAPED_LENGTH = Uint8Array.from({ length: 256 }, (_, byte) => {
  if (byte === 0x22 || byte === 0x5c) return 2;
  if (byte >= 0x20) return 1;
  return byte === 0x08 || byte === 0x09 || byte === 0x0a || byte === 0x0c || byte === 0x0d ? 2 : 6;
});

const OFFSET_EVERY = 4096;

/** A text as the inside of a JSON string literal (the JSON writer's escaping), and where each of its bytes lands there. */
export class EscapedText implements ShownForm {
  readonly bytes: Uint8Array;
  /** Where every OFFSET_EVERY-th byte lands. */
  private readonly samples: number[] = [];

  constructor(private readonly text: Uint8Array) {
    let length = 0;
    for (let block = 0; block < text.length; block += OFFSET_EVERY) {
      this.samples.push(length);
      const end = Math.min(text.length, block + OFFSET_EVERY);
      for (let i = block; i < end; i++) length += ESCAPED_LENGTH[text[i] as number] as number;
    }
    const into = Buffer.allocUnsafe(length + MAX_ESCAPED_BYTES);
    const progress = { read: 0, written: 0 };
    while (progress.read < text.length) escapeJsonInto(text, progress.read, into, progress.written, progress);
    if (progress.written !== length) throw new Error('JSON escaping did not go as expected');
    this.bytes = into.subarray(0, length);
  }

  /** Where byte `raw` of the text (a character boundary) starts in `bytes`. */
  offset(raw: number): number {
    if (raw <= 0) return 0;
    if (raw >= this.text.length) return this.bytes.length;
    const sample = Math.floor(raw / OFFSET_EVERY);
    let at = this.samples[sample] as number;
    for (let i = sample * OFFSET_EVERY; i < raw; i++) at += ESCAPED_LENGTH[this.text[i] as number] as number;
    return at;
  }
}
