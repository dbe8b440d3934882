import type { SummaryRecord } from '@reposcan/contracts';
import type { TextFormat } from '@reposcan/contracts/vocabulary';
import { ScanError } from '@reposcan/contracts';
import { createTokenCounter, createTokenPool, jsonRenderer, markdownRenderer, txtRenderer } from '@reposcan/core';
import type { RenderContext, TextFileRecord, TokenCounter, TokenEncodingName, TokenPool } from '@reposcan/core';

/** One unit a page is made of: the head (repository, tree), one file, or the tail (totals). */
interface Block {
  readonly path: string | null;
  readonly text: string;
}

/** A file of a completed scan as its outputs hold it (after any redaction). */
export interface ScanFileText {
  readonly record: TextFileRecord;
  readonly content: string;
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

/**
 * A completed scan's text, read from its JSON output (every part of it, pieces of a cut file
 * joined) and its summary: the files with their contents, and each text format's blocks, rendered
 * by the engine's own renderers, so a digest's pages put together are that format's output.
 */
export class ScanDigest {
  private readonly blocks = new Map<TextFormat, readonly Block[]>();
  private readonly blockTokens = new Map<string, number>();
  readonly files: ReadonlyMap<string, ScanFileText>;
  private readonly count: CountBatch;

  private constructor(
    private readonly ctx: RenderContext,
    private readonly ordered: readonly ScanFileText[],
    counting: TokenCounting,
  ) {
    this.files = new Map(ordered.map((f) => [f.record.path, f]));
    this.count = counting(ctx.encoding);
  }

  /**
   * From the summary and the JSON output's text (one string, or one per part in order). Pages
   * are counted through `counting` (a server's: on threads, off its event loop).
   */
  static from(summary: SummaryRecord, jsonParts: readonly string[], counting = inProcessCounting): ScanDigest {
    let tree: string | null = null;
    let head: Partial<Record<'repository' | 'encoding' | 'summary' | 'assets' | 'skipped_count', unknown>> = {};
    const files: ScanFileText[] = [];
    for (const text of jsonParts) {
      const doc = JSON.parse(text) as Record<string, unknown>;
      if (typeof doc.tree === 'string') tree = (tree ?? '') + doc.tree;
      head = { ...head, ...pick(doc, ['repository', 'encoding', 'summary', 'assets', 'skipped_count']) };
      for (const entry of (doc.files ?? []) as Record<string, unknown>[]) {
        const {
          content,
          file_part: piece,
          ...record
        } = entry as {
          content: string;
          file_part?: { part: number };
          path: string;
        };
        const previous = files.at(-1);
        if (piece && piece.part > 1 && previous && previous.record.path === record.path)
          files[files.length - 1] = { record: previous.record, content: previous.content + content };
        else files.push({ record: record as unknown as TextFileRecord, content });
      }
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
    return new ScanDigest(ctx, files, counting);
  }

  get encoding(): TokenEncodingName {
    return this.ctx.encoding;
  }

  /** A page of the format's output from `cursor` (null: the start), of at most `maxTokens` tokens. */
  digestPage(format: TextFormat, cursor: string | null, maxTokens: number, signal?: AbortSignal): Promise<Page> {
    const blocks = this.blocksOf(format);
    const count = textCounter(this.count, signal);
    return pageOf(blocks, cursor, maxTokens, count, async (from, to) => {
      const missing: number[] = [];
      for (let i = from; i < to; i++) if (!this.blockTokens.has(`${format}:${i}`)) missing.push(i);
      if (missing.length > 0) {
        const counts = await count(missing.map((i) => (blocks[i] as Block).text));
        missing.forEach((i, k) => this.blockTokens.set(`${format}:${i}`, counts[k] as number));
      }
      return Array.from({ length: to - from }, (_, k) => this.blockTokens.get(`${format}:${from + k}`) as number);
    });
  }

  /** A page of one file's text, cut at line ends when it is over `maxTokens`. */
  filePage(path: string, cursor: string | null, maxTokens: number, signal?: AbortSignal): Promise<Page> {
    const file = this.files.get(path);
    if (!file)
      return Promise.reject(
        new ScanError(
          'INVALID_REQUEST',
          `This scan has no textual file ${JSON.stringify(path)}; call list_scan_files for the paths it holds (non-textual files have no text).`,
        ),
      );
    const count = textCounter(this.count, signal);
    const key = `file:${path}`;
    return pageOf([{ path, text: file.content }], cursor, maxTokens, count, async () => {
      let n = this.blockTokens.get(key);
      if (n === undefined) this.blockTokens.set(key, (n = (await count([file.content]))[0] as number));
      return [n];
    });
  }

  private blocksOf(format: TextFormat): readonly Block[] {
    let blocks = this.blocks.get(format);
    if (blocks) return blocks;
    const renderer = RENDERERS[format];
    const list: Block[] = [];
    const head = renderer.head(this.ctx);
    if (head !== '') list.push({ path: null, text: head });
    this.ordered.forEach((file, index) => {
      let text = '';
      for (const chunk of renderer.file(file.record, encoder.encode(file.content), this.ctx.lite)) {
        if (typeof chunk === 'string') text += chunk;
        else if (chunk instanceof Uint8Array) text += decoder.decode(chunk);
        else text += JSON.stringify(decoder.decode(chunk.jsonString));
      }
      // The separator ends the previous block, so a file's block is its own line alone.
      const previous = list.at(-1);
      if (index > 0 && previous)
        list[list.length - 1] = { path: previous.path, text: previous.text + renderer.separator };
      list.push({ path: file.record.path, text });
    });
    const tail = renderer.tail(this.ctx, this.ordered.length);
    if (tail !== '') list.push({ path: null, text: tail });
    this.blocks.set(format, (blocks = list));
    return blocks;
  }
}

const decoder = new TextDecoder();
const encoder = new TextEncoder();

function pick(doc: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(keys.filter((k) => k in doc).map((k) => [k, doc[k]]));
}

/** `<block>.<offset>`: the block a page starts in and where in it (UTF-16 units, at a line end or a character). */
function parseCursor(cursor: string | null, blocks: readonly Block[]): { block: number; offset: number } {
  if (cursor === null || cursor === '') return { block: 0, offset: 0 };
  const match = /^(\d+)\.(\d+)$/.exec(cursor);
  const block = Number(match?.[1]);
  const offset = Number(match?.[2]);
  if (!match || block >= blocks.length || offset >= (blocks[block] as Block).text.length)
    throw new ScanError(
      'INVALID_REQUEST',
      `The cursor ${JSON.stringify(cursor)} is not one this scan gave; pass the next_cursor of the previous page, or leave cursor out to start again.`,
    );
  return { block, offset };
}

/**
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
  blocks: readonly Block[],
  cursor: string | null,
  maxTokens: number,
  count: (texts: string[]) => Promise<number[]>,
  tokensOf: (from: number, to: number) => Promise<number[]>,
): Promise<Page> {
  if (blocks.length === 0) return { text: '', tokens: 0, files: [], cut_inside_file: false, next_cursor: null };
  const start = parseCursor(cursor, blocks);
  const first = blocks[start.block] as Block;
  const rest = start.offset === 0 ? first.text : first.text.slice(start.offset);
  const restTokens =
    start.offset === 0
      ? ((await tokensOf(start.block, start.block + 1))[0] as number)
      : ((await count([rest]))[0] as number);
  const paths = (from: number, to: number): string[] =>
    blocks
      .slice(from, to)
      .map((b) => b.path)
      .filter((p): p is string => p !== null);
  if (restTokens > maxTokens) {
    const cut = await cutWithin(first.text, start.offset, maxTokens, restTokens, count);
    const done = cut.end >= first.text.length;
    return {
      text: first.text.slice(start.offset, cut.end),
      tokens: cut.tokens,
      files: paths(start.block, start.block + 1),
      cut_inside_file: first.path !== null && !done,
      next_cursor: done ? nextOf(blocks, start.block + 1) : `${start.block}.${cut.end}`,
    };
  }
  const pieces = [rest];
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
      for (let chars = 0; to < blocks.length && (to === next || chars < ahead); to++)
        chars += (blocks[to] as Block).text.length;
      known = await tokensOf(next, to);
      knownFrom = next;
    }
    const n = known[next - knownFrom] as number;
    if (sum + n > maxTokens) break;
    sum += n;
    pieces.push((blocks[next] as Block).text);
    next++;
  }
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
    next_cursor: nextOf(blocks, next),
  };
}

function nextOf(blocks: readonly Block[], index: number): string | null {
  return index < blocks.length ? `${index}.0` : null;
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

/**
 * The end (exclusive) of the longest run from `from` within `maxTokens`, at a line end if one
 * fits, always past `from`, and its count. `restTokens` (the count from `from` to the end, over
 * the budget) gives the first guess of where the cut falls.
 */
async function cutWithin(
  text: string,
  from: number,
  maxTokens: number,
  restTokens: number,
  count: (texts: string[]) => Promise<number[]>,
): Promise<{ end: number; tokens: number }> {
  const charsPerToken = (text.length - from) / Math.max(1, restTokens);
  const guessEnd = from + maxTokens * charsPerToken;
  const lineEnds: number[] = [];
  for (let i = text.indexOf('\n', from); i !== -1 && i < text.length - 1; i = text.indexOf('\n', i + 1))
    lineEnds.push(i + 1);
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
    lineEnd - from - 1,
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
