import { createHash } from 'node:crypto';
import type { SummaryRecord } from '@reposcan/contracts';
import type { TextFormat } from '@reposcan/contracts/vocabulary';
import { ScanError } from '@reposcan/contracts';
import {
  createTokenCounter,
  createTokenPool,
  forEachLine,
  jsonRenderer,
  LONGEST_TOKEN_BYTES,
  markdownRenderer,
  txtRenderer,
} from '@reposcan/core';
import type { RenderContext, TextFileRecord, TokenCounter, TokenEncodingName, TokenPool } from '@reposcan/core';

/** One unit a page is made of: the head (repository, tree), one file, or the tail (totals). */
interface Block {
  readonly path: string | null;
  readonly text: string;
}

/** A page's view of its blocks: their paths and lengths at hand, their texts loaded when asked. */
interface Blocks {
  readonly length: number;
  path(index: number): string | null;
  /** About how many characters the block has (what the look-ahead of counts goes by). */
  size(index: number): number;
  /** The texts of blocks [from, to). */
  texts(from: number, to: number): Promise<string[]>;
}

/** Blocks held whole in memory. */
function heldBlocks(blocks: readonly Block[]): Blocks {
  return {
    length: blocks.length,
    path: (i) => (blocks[i] as Block).path,
    size: (i) => (blocks[i] as Block).text.length,
    texts: (from, to) => Promise.resolve(blocks.slice(from, to).map((b) => b.text)),
  };
}

/** A textual file of a completed scan, found in its JSON output: its record, and where its content is. */
export interface IndexedFile {
  readonly record: TextFileRecord;
  /** The JSON string literal of its content in each part that holds a piece of it (quotes included). */
  readonly pieces: ReadonlyArray<{ part: number | undefined; start: number; end: number }>;
}

export interface Page {
  text: string;
  /** The exact token count of `text` in the scan's encoding. */
  tokens: number;
  /** Files whose block begins or goes on in this page, in order. */
  files: string[];
  /** True when the page ends inside a file (a file alone over the budget, cut at a line end). */
  cut_inside_file: boolean;
  /** Where the next page starts; null after the last page. */
  next_cursor: string | null;
}

const RENDERERS = { txt: txtRenderer, md: markdownRenderer, json: jsonRenderer } as const;

/** Exact token counts of a batch of UTF-8 contents, in input order (core's `TokenPool.count`). */
export type CountBatch = (contents: readonly Uint8Array[], signal?: AbortSignal) => Promise<number[]>;
/** Where the digests of an encoding count their pages. */
export type TokenCounting = (encoding: TokenEncodingName) => CountBatch;

const counters = new Map<TokenEncodingName, TokenCounter>();

/** One counter per encoding in the process: its tables load once, on first use. */
export function counterFor(encoding: TokenEncodingName): TokenCounter {
  let counter = counters.get(encoding);
  if (!counter) counters.set(encoding, (counter = createTokenCounter(encoding)));
  return counter;
}

/** Counting on the calling thread: for tests and tools, never for a server's event loop. */
export const inProcessCounting: TokenCounting = (encoding) => (contents) =>
  Promise.resolve(contents.map((content) => counterFor(encoding).countUtf8(content)));

/**
 * Counting on core's tokenizer threads: one pool per encoding, started on first use (tables read
 * from the build's snapshot), `threads` each. `close` ends them.
 */
export function pooledCounting(threads = 1): { counting: TokenCounting; close(): Promise<void> } {
  const pools = new Map<TokenEncodingName, TokenPool>();
  return {
    counting(encoding) {
      return (contents, signal) => {
        let pool = pools.get(encoding);
        if (!pool) pools.set(encoding, (pool = createTokenPool({ encoding, threads })));
        return pool.count(contents, signal);
      };
    },
    async close() {
      await Promise.all([...pools.values()].map((pool) => pool.close()));
      pools.clear();
    },
  };
}

/** Bytes [start, end) of a scan's JSON output (`part`: of that part; undefined: the one output). */
export type ReadJson = (part: number | undefined, start: number, end: number) => Promise<Uint8Array>;

/** One JSON output of a scan (or one of its parts) and its size in bytes. */
export interface JsonOutput {
  part: number | undefined;
  bytes: number;
}

/** Bytes of the JSON output read at a time while it is indexed. */
const INDEX_WINDOW = 4 << 20;
/** Characters of block texts kept from one page to the next (the counts are kept for good). */
const RECENT_CHARS = 8 << 20;
/** The newest block stays, alone over RECENT_CHARS, up to this many characters (a long file's next page reads it). */
const KEPT_BLOCK_CHARS = 32 << 20;
const CONTENT_KEY = Buffer.from(',"content":"');

/**
 * A completed scan's text, from its JSON output (every part of it, pieces of a cut file joined)
 * and its summary, rendered block by block with the engine's own renderers, so a digest's pages
 * put together are that format's output. The output is read once to index it (each file's
 * record and where its content lies) and then a page's worth at a time: a scan of any size
 * costs its index in memory, not its text.
 */
export class ScanDigest {
  private readonly blockTokens = new Map<string, number>();
  private readonly ends = new Map<TextFormat, { head: string; tail: string }>();
  private readonly recent = new Map<string, string>();
  private recentChars = 0;
  readonly files: ReadonlyMap<string, IndexedFile>;
  /** About how many bytes the digest holds for as long as it is kept. */
  readonly heldBytes: number;
  private readonly count: CountBatch;

  private constructor(
    /** What a cursor's check names the scan by. */
    private readonly scanId: string,
    private readonly ctx: RenderContext,
    private readonly ordered: readonly IndexedFile[],
    /** What a page reads through when its caller names no reader (outputs held in memory). */
    private readonly ownRead: ReadJson,
    indexBytes: number,
    counting: TokenCounting,
  ) {
    this.files = new Map(ordered.map((f) => [f.record.path, f]));
    this.count = counting(ctx.encoding);
    // The newest block may stay alone over RECENT_CHARS (keep).
    const largest = ordered.reduce((n, f) => Math.max(n, literalBytes(f)), 0);
    this.heldBytes = indexBytes + 2 * Math.max(RECENT_CHARS, Math.min(largest, KEPT_BLOCK_CHARS));
  }

  /** Indexes the JSON outputs `outputs`, read through `read`. Pages are counted through `counting` (a server's: on threads, off its event loop). */
  static async open(
    summary: SummaryRecord,
    outputs: readonly JsonOutput[],
    read: ReadJson,
    counting = inProcessCounting,
  ): Promise<ScanDigest> {
    let tree: string | null = null;
    let head: Partial<Record<'repository' | 'encoding' | 'summary' | 'assets' | 'skipped_count', unknown>> = {};
    const files: Array<{ record: TextFileRecord; pieces: IndexedFile['pieces'][number][] }> = [];
    let indexBytes = 0;
    for (const output of outputs) {
      // Every line but the files' is the document around them, parsed once they are left out.
      const rest: string[] = [];
      await forEachLine(windowsOf(read, output), (line, at) => {
        const file = fileLine(line);
        if (file === null) {
          rest.push(line.toString('utf8'));
          return;
        }
        const { file_part: piece, ...record } = JSON.parse(`${line.toString('utf8', file.open, file.content)}}`) as {
          file_part?: { part: number };
          path: string;
        };
        indexBytes += file.content - file.open;
        const where = { part: output.part, start: at + file.content + CONTENT_KEY.length - 1, end: at + file.close };
        const previous = files.at(-1);
        if (piece && piece.part > 1 && previous && previous.record.path === record.path) previous.pieces.push(where);
        else files.push({ record: record as unknown as TextFileRecord, pieces: [where] });
      });
      const doc = JSON.parse(rest.join('\n')) as Record<string, unknown>;
      if (typeof doc.tree === 'string') tree = (tree ?? '') + doc.tree;
      indexBytes += typeof doc.tree === 'string' ? doc.tree.length : 0;
      head = { ...head, ...pick(doc, ['repository', 'encoding', 'summary', 'assets', 'skipped_count']) };
    }
    const ctx: RenderContext = {
      repository: (head.repository ?? summary.repository) as RenderContext['repository'],
      encoding: (head.encoding ?? summary.encoding) as TokenEncodingName,
      tree: summary.options.skip_tree ? null : tree,
      lite: summary.options.lite,
      summary: (head.summary ?? summary.summary) as RenderContext['summary'],
      assets: (head.assets ?? summary.assets) as RenderContext['assets'],
      skippedCount: (head.skipped_count ?? summary.skipped.length) as number,
    };
    return new ScanDigest(summary.scan_id, ctx, files, read, indexBytes, counting);
  }

  /** From JSON outputs held as text (one string, or one per part in order). */
  static from(summary: SummaryRecord, jsonParts: readonly string[], counting = inProcessCounting): Promise<ScanDigest> {
    const bytes = jsonParts.map((text) => Buffer.from(text, 'utf8'));
    const part = (index: number): number | undefined => (bytes.length > 1 ? index + 1 : undefined);
    return ScanDigest.open(
      summary,
      bytes.map((b, i) => ({ part: part(i), bytes: b.length })),
      (p, start, end) => Promise.resolve((bytes[(p ?? 1) - 1] as Buffer).subarray(start, end)),
      counting,
    );
  }

  get encoding(): TokenEncodingName {
    return this.ctx.encoding;
  }

  /**
   * A page of the format's output from `cursor` (null: the start), of at most `maxTokens` tokens.
   * `read` is the caller's own way to the output (its rights, its signal): a digest outlives the
   * request that indexed it.
   */
  digestPage(
    format: TextFormat,
    cursor: string | null,
    maxTokens: number,
    signal?: AbortSignal,
    read: ReadJson = this.ownRead,
  ): Promise<Page> {
    const blocks = this.blocksOf(format, read);
    const count = textCounter(this.count, signal);
    return pageOf(blocks, cursorsOf(`${this.scanId}:${format}`), cursor, maxTokens, count, async (from, to) => {
      const missing: number[] = [];
      for (let i = from; i < to; i++) if (!this.blockTokens.has(`${format}:${i}`)) missing.push(i);
      if (missing.length > 0) {
        const texts = await blocks.texts(missing[0] as number, (missing.at(-1) as number) + 1);
        const counts = await count(missing.map((i) => texts[i - (missing[0] as number)] as string));
        missing.forEach((i, k) => this.blockTokens.set(`${format}:${i}`, counts[k] as number));
      }
      return Array.from({ length: to - from }, (_, k) => this.blockTokens.get(`${format}:${from + k}`) as number);
    });
  }

  /** A page of one file's text, cut at line ends when it is over `maxTokens` (`read` as for digestPage). */
  async filePage(
    path: string,
    cursor: string | null,
    maxTokens: number,
    signal?: AbortSignal,
    read: ReadJson = this.ownRead,
  ): Promise<Page> {
    const file = this.files.get(path);
    if (!file)
      throw new ScanError(
        'INVALID_REQUEST',
        `This scan has no textual file ${JSON.stringify(path)}; call list_scan_files for the paths it holds (non-textual files have no text).`,
      );
    const count = textCounter(this.count, signal);
    const key = `file:${path}`;
    let content = this.recent.get(key);
    if (content === undefined) {
      [content] = (await this.contents([file], read)) as [string];
      this.keep(key, content);
    }
    const cursors = cursorsOf(`${this.scanId}:file:${path}`);
    return pageOf(heldBlocks([{ path, text: content }]), cursors, cursor, maxTokens, count, async () => {
      let n = this.blockTokens.get(key);
      if (n === undefined) this.blockTokens.set(key, (n = (await count([content]))[0] as number));
      return [n];
    });
  }

  /** The contents of `files`, which follow one another in the output: one read per part. */
  private async contents(files: readonly IndexedFile[], read: ReadJson): Promise<string[]> {
    const pieces = files.flatMap((f) => f.pieces);
    const spans = new Map<number | undefined, { start: number; end: number; bytes?: Uint8Array }>();
    for (const { part, start, end } of pieces) {
      const span = spans.get(part);
      if (span) {
        span.start = Math.min(span.start, start);
        span.end = Math.max(span.end, end);
      } else spans.set(part, { start, end });
    }
    for (const [part, span] of spans) span.bytes = await read(part, span.start, span.end);
    return files.map((f) =>
      f.pieces
        .map(({ part, start, end }) => {
          const span = spans.get(part) as { start: number; bytes: Uint8Array };
          return JSON.parse(decoder.decode(span.bytes.subarray(start - span.start, end - span.start))) as string;
        })
        .join(''),
    );
  }

  /** A format's head and tail (the tree, the totals): rendered on the first page of that format. */
  private endsOf(format: TextFormat): { head: string; tail: string } {
    let ends = this.ends.get(format);
    if (!ends) {
      const renderer = RENDERERS[format];
      ends = { head: renderer.head(this.ctx), tail: renderer.tail(this.ctx, this.ordered.length) };
      this.ends.set(format, ends);
    }
    return ends;
  }

  private blocksOf(format: TextFormat, read: ReadJson): Blocks {
    const renderer = RENDERERS[format];
    const { head, tail } = this.endsOf(format);
    const first = head === '' ? 0 : 1;
    const length = first + this.ordered.length + (tail === '' ? 0 : 1);
    const fileAt = (i: number): IndexedFile | null => this.ordered[i - first] ?? null;
    const endAt = (i: number): string => (i === 0 && first === 1 ? head : tail);
    const render = (file: IndexedFile, index: number, content: string): string => {
      let text = '';
      for (const chunk of renderer.file(file.record, encoder.encode(content), this.ctx.lite)) {
        if (typeof chunk === 'string') text += chunk;
        else if (chunk instanceof Uint8Array) text += decoder.decode(chunk);
        else text += JSON.stringify(decoder.decode(chunk.jsonString));
      }
      // The separator ends a file's block, so the next file's block is its own line alone.
      return index < this.ordered.length - 1 ? text + renderer.separator : text;
    };
    return {
      length,
      path: (i) => fileAt(i)?.record.path ?? null,
      size: (i) => {
        const file = fileAt(i);
        return file === null ? endAt(i).length : literalBytes(file);
      },
      texts: async (from, to) => {
        const texts: Array<string | undefined> = [];
        const missing: number[] = [];
        for (let i = from; i < to; i++) {
          const kept = this.recent.get(`${format}:${i}`);
          if (kept === undefined && fileAt(i) !== null) missing.push(i);
          texts.push(kept ?? (fileAt(i) === null ? endAt(i) : undefined));
        }
        if (missing.length > 0) {
          const contents = await this.contents(
            missing.map((i) => fileAt(i) as IndexedFile),
            read,
          );
          missing.forEach((i, k) => {
            const text = render(fileAt(i) as IndexedFile, i - first, contents[k] as string);
            texts[i - from] = text;
            this.keep(`${format}:${i}`, text);
          });
        }
        return texts as string[];
      },
    };
  }

  /**
   * Keeps a block's text for the next page (which starts where this one ended): older blocks go
   * beyond RECENT_CHARS, the newest stays even alone over it, up to KEPT_BLOCK_CHARS (the next
   * page of a long file reads it).
   */
  private keep(key: string, text: string): void {
    if (text.length > KEPT_BLOCK_CHARS) return;
    this.recent.set(key, text);
    this.recentChars += text.length;
    for (const [k, t] of this.recent) {
      if (this.recentChars <= RECENT_CHARS || k === key) break;
      this.recent.delete(k);
      this.recentChars -= t.length;
    }
  }
}

/** The length of a file's content as the JSON output holds it (string literals, escaped), in bytes. */
function literalBytes(file: IndexedFile): number {
  return file.pieces.reduce((n, p) => n + p.end - p.start, 0);
}

/** Where a file's object lies in a line of the JSON output, or null for any other line. */
function fileLine(line: Buffer): { open: number; content: number; close: number } | null {
  let open = 0;
  while (line[open] === 0x20) open++;
  if (line[open] === 0x2c /* , */) open++;
  if (line[open] !== 0x7b /* { */ || line[open + 1] !== 0x22 /* " */) return null;
  // Inside a JSON string a quote is escaped, so the first `,"content":"` is the key.
  const content = line.indexOf(CONTENT_KEY, open);
  if (content < 0) return null;
  let close = line.length;
  if (line[close - 1] === 0x2c) close--;
  // The object's closing brace: the literal ends right before it.
  return line[close - 1] === 0x7d ? { open, content, close: close - 1 } : null;
}

/** The bytes of `output`, INDEX_WINDOW at a time. */
async function* windowsOf(read: ReadJson, output: JsonOutput): AsyncIterable<Uint8Array> {
  for (let at = 0; at < output.bytes;) {
    const chunk = await read(output.part, at, Math.min(output.bytes, at + INDEX_WINDOW));
    if (chunk.length === 0) throw new Error('The JSON output ended before its size');
    at += chunk.length;
    yield chunk;
  }
}

const decoder = new TextDecoder();
const encoder = new TextEncoder();

function pick(doc: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(keys.filter((k) => k in doc).map((k) => [k, doc[k]]));
}

/** Where a page starts: a block, and where in it (UTF-16 units, at a line end or a character). */
interface Place {
  block: number;
  offset: number;
}

/** The cursors of one run of pages (a format's digest, or one file). */
interface Cursors {
  /** The cursor of a page that starts at `place`. */
  of(place: Place): string;
  /** Where a cursor this run gave points (null: the start); any other is refused. */
  parse(cursor: string | null): Place;
}

/**
 * `<block>.<offset>.<check>`, the check a hash of the place and `scope` (the scan and the run):
 * a cursor made up, changed, or brought from another scan, format or file is refused, and no
 * page start needs keeping between calls. It is no secret: it catches mistakes, and a forged
 * cursor would only start a page elsewhere in a scan its caller may read whole.
 */
function cursorsOf(scope: string): Cursors {
  const check = (place: string): string =>
    createHash('sha256').update(`${scope}\n${place}`).digest('base64url').slice(0, 8);
  return {
    of: ({ block, offset }) => `${block}.${offset}.${check(`${block}.${offset}`)}`,
    parse(cursor) {
      if (cursor === null || cursor === '') return { block: 0, offset: 0 };
      const match = /^(\d+)\.(\d+)\.([\w-]{8})$/.exec(cursor);
      if (!match || check(`${match[1]}.${match[2]}`) !== match[3]) throw badCursor(cursor);
      return { block: Number(match[1]), offset: Number(match[2]) };
    },
  };
}

function badCursor(cursor: string | null): ScanError {
  return new ScanError(
    'INVALID_REQUEST',
    `The cursor ${JSON.stringify(cursor)} is not one this scan gave; pass the next_cursor of the previous page, or leave cursor out to start again.`,
  );
}

/** Counts texts in one batch: UTF-8 encoded here, counted where `count` counts. */
function textCounter(count: CountBatch, signal: AbortSignal | undefined): (texts: string[]) => Promise<number[]> {
  return (texts) =>
    count(
      texts.map((t) => encoder.encode(t)),
      signal,
    );
}

/** Candidates counted per round trip of a search for a cut: a few rounds instead of a dozen. */
const PROBES = 8;

/**
 * Whole blocks while they fit, then the exact count of the page checked and blocks taken back
 * until it fits (a BPE count is not quite additive where two texts meet). A block that does not
 * fit alone is cut at the last line end that fits, or inside a line that alone is over the budget.
 * Every count is a batch awaited from `count`, so the caller's thread only renders and joins.
 */
async function pageOf(
  blocks: Blocks,
  cursors: Cursors,
  cursor: string | null,
  maxTokens: number,
  count: (texts: string[]) => Promise<number[]>,
  tokensOf: (from: number, to: number) => Promise<number[]>,
): Promise<Page> {
  if (blocks.length === 0) return { text: '', tokens: 0, files: [], cut_inside_file: false, next_cursor: null };
  const start = cursors.parse(cursor);
  // Only a forged cursor is out of bounds. A block starts at 0 even when it is empty (an empty
  // file), and no page starts at its end.
  if (start.block >= blocks.length) throw badCursor(cursor);
  const [firstText] = (await blocks.texts(start.block, start.block + 1)) as [string];
  if (start.offset > 0 && start.offset >= firstText.length) throw badCursor(cursor);
  const firstPath = blocks.path(start.block);
  const rest = start.offset === 0 ? firstText : firstText.slice(start.offset);
  const blockTokens = (await tokensOf(start.block, start.block + 1))[0] as number;
  // The rest of a block is counted only when it could fit: every page of a long file counting all
  // that follows it would make reading the file quadratic in its length.
  const restTokens =
    start.offset === 0 ? blockTokens : overBudget(rest, maxTokens) ? Infinity : ((await count([rest]))[0] as number);
  const paths = (from: number, to: number): string[] =>
    Array.from({ length: to - from }, (_, k) => blocks.path(from + k)).filter((p): p is string => p !== null);
  if (restTokens > maxTokens) {
    const charsPerToken = firstText.length / Math.max(1, blockTokens);
    const cut = await cutWithin(firstText, start.offset, maxTokens, charsPerToken, count);
    const done = cut.end >= firstText.length;
    return {
      text: firstText.slice(start.offset, cut.end),
      tokens: cut.tokens,
      files: paths(start.block, start.block + 1),
      cut_inside_file: firstPath !== null && !done,
      next_cursor: done
        ? nextOf(blocks, cursors, start.block + 1)
        : cursors.of({ block: start.block, offset: cut.end }),
    };
  }
  let sum = restTokens;
  let next = start.block + 1;
  // Blocks are counted ahead in batches of about a page's text (counts are kept for later pages).
  const ahead = Math.max(4096, maxTokens * 4);
  let known: number[] = [];
  let knownFrom = next;
  for (;;) {
    if (next >= blocks.length) break;
    if (next - knownFrom >= known.length) {
      let to = next;
      for (let chars = 0; to < blocks.length && (to === next || chars < ahead); to++) chars += blocks.size(to);
      known = await tokensOf(next, to);
      knownFrom = next;
    }
    const n = known[next - knownFrom] as number;
    if (sum + n > maxTokens) break;
    sum += n;
    next++;
  }
  const pieces = [rest, ...(await blocks.texts(start.block + 1, next))];
  // The page's exact count, then (rarely) a few shorter pages at once until one fits.
  let [tokens] = (await count([pieces.join('')])) as [number];
  while (tokens > maxTokens && pieces.length > 1) {
    const shorter = Array.from({ length: Math.min(4, pieces.length - 1) }, (_, k) =>
      pieces.slice(0, pieces.length - 1 - k).join(''),
    );
    const counts = await count(shorter);
    const fit = counts.findIndex((c) => c <= maxTokens);
    const drop = fit < 0 ? shorter.length : fit + 1;
    pieces.length -= drop;
    next -= drop;
    tokens = fit < 0 ? (counts.at(-1) as number) : (counts[fit] as number);
  }
  return {
    text: pieces.join(''),
    tokens,
    files: paths(start.block, next),
    cut_inside_file: false,
    next_cursor: nextOf(blocks, cursors, next),
  };
}

function nextOf(blocks: Blocks, cursors: Cursors, index: number): string | null {
  return index < blocks.length ? cursors.of({ block: index, offset: 0 }) : null;
}

/**
 * The largest index below `n` whose candidate fits (fitting is taken to hold up to a point, then
 * not), or -1, with its count. PROBES candidates go in each batch: the first around `guess`, then
 * spread over what is left (growing from the last fit while nothing has been over).
 */
async function lastFit(
  n: number,
  guess: number,
  countOf: (indices: number[]) => Promise<number[]>,
  maxTokens: number,
): Promise<{ index: number; tokens: number }> {
  if (n <= 0) return { index: -1, tokens: 0 };
  let lo = -1;
  let loTokens = 0;
  let hi = n;
  const g = Math.min(n - 1, Math.max(0, guess));
  let picks = [0.5, 0.75, 0.9, 1, 1.1, 1.25, 1.5, 2].map((f) => Math.floor(g * f));
  for (;;) {
    const sorted = [...new Set(picks.map((i) => Math.min(hi - 1, Math.max(lo + 1, i))))].sort((a, b) => a - b);
    const counts = await countOf(sorted);
    for (let k = 0; k < sorted.length; k++) {
      if ((counts[k] as number) > maxTokens) {
        hi = sorted[k] as number;
        break;
      }
      lo = sorted[k] as number;
      loTokens = counts[k] as number;
    }
    if (hi - lo <= 1) return { index: lo, tokens: loTokens };
    const span = hi - lo - 1;
    if (hi === n) {
      const step = Math.max(1, lo + 1);
      picks = Array.from({ length: PROBES }, (_, k) => lo + step * 2 ** k);
    } else
      picks = Array.from(
        { length: Math.min(PROBES, span) },
        (_, k) => lo + 1 + Math.floor(((k + 1) * span) / (PROBES + 1)),
      );
  }
}

/** Whether `text` is certainly over `maxTokens`, by its length alone: no token is longer than LONGEST_TOKEN_BYTES, and a UTF-16 unit is at least one UTF-8 byte. */
function overBudget(text: string, maxTokens: number): boolean {
  return text.length > maxTokens * LONGEST_TOKEN_BYTES;
}

/**
 * The end (exclusive) of the longest run from `from` within `maxTokens`, at a line end if one
 * fits, always past `from`, and its count; the rest of `text` is over the budget. `charsPerToken`
 * (the whole text's) gives the first guess of where the cut falls. Only the reach of the budget
 * is looked at: no run longer than overBudget allows can fit.
 */
async function cutWithin(
  text: string,
  from: number,
  maxTokens: number,
  charsPerToken: number,
  count: (texts: string[]) => Promise<number[]>,
): Promise<{ end: number; tokens: number }> {
  const guessEnd = from + maxTokens * charsPerToken;
  const reach = Math.min(text.length - 1, from + maxTokens * LONGEST_TOKEN_BYTES);
  const lineEnds: number[] = [];
  for (let i = text.indexOf('\n', from); i !== -1 && i < reach; i = text.indexOf('\n', i + 1)) lineEnds.push(i + 1);
  const runs = (ends: number[]) => count(ends.map((end) => text.slice(from, end)));
  if (lineEnds.length > 0) {
    let guess = lineEnds.findIndex((end) => end >= guessEnd);
    if (guess < 0) guess = lineEnds.length - 1;
    const best = await lastFit(lineEnds.length, guess, (ix) => runs(ix.map((i) => lineEnds[i] as number)), maxTokens);
    if (best.index >= 0) return { end: lineEnds[best.index] as number, tokens: best.tokens };
  }
  // One line alone is over the budget: the longest run of characters that fits, never half a pair.
  const lineEnd = lineEnds[0] ?? text.length;
  const best = await lastFit(
    Math.min(lineEnd - from - 1, maxTokens * LONGEST_TOKEN_BYTES),
    Math.floor(guessEnd - from - 1),
    (ix) => runs(ix.map((i) => from + 1 + i)),
    maxTokens,
  );
  let end = from + 1 + Math.max(0, best.index);
  let tokens = best.index >= 0 ? best.tokens : -1;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff && end < text.length) {
    end += end - 1 > from ? -1 : 1;
    tokens = -1;
  }
  if (tokens < 0) [tokens] = (await runs([end])) as [number];
  return { end, tokens };
}
