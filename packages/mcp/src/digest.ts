import type { SummaryRecord } from '@reposcan/contracts';
import type { TextFormat } from '@reposcan/contracts/vocabulary';
import { ScanError } from '@reposcan/contracts';
import { createTokenCounter, jsonRenderer, markdownRenderer, txtRenderer } from '@reposcan/core';
import type { RenderContext, TextFileRecord, TokenCounter, TokenEncodingName } from '@reposcan/core';

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
const counters = new Map<TokenEncodingName, TokenCounter>();

/** One counter per encoding in the process: its tables load once, on first use. */
export function counterFor(encoding: TokenEncodingName): TokenCounter {
  let counter = counters.get(encoding);
  if (!counter) counters.set(encoding, (counter = createTokenCounter(encoding)));
  return counter;
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
  readonly counter: TokenCounter;

  private constructor(
    private readonly ctx: RenderContext,
    private readonly ordered: readonly ScanFileText[],
  ) {
    this.files = new Map(ordered.map((f) => [f.record.path, f]));
    this.counter = counterFor(ctx.encoding);
  }

  /** From the summary and the JSON output's text (one string, or one per part in order). */
  static from(summary: SummaryRecord, jsonParts: readonly string[]): ScanDigest {
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
    return new ScanDigest(ctx, files);
  }

  get encoding(): TokenEncodingName {
    return this.ctx.encoding;
  }

  /** A page of the format's output from `cursor` (null: the start), of at most `maxTokens` tokens. */
  digestPage(format: TextFormat, cursor: string | null, maxTokens: number): Page {
    const blocks = this.blocksOf(format);
    return pageOf(blocks, cursor, maxTokens, this.counter, (i) => {
      const key = `${format}:${i}`;
      let n = this.blockTokens.get(key);
      if (n === undefined) this.blockTokens.set(key, (n = this.counter.count((blocks[i] as Block).text)));
      return n;
    });
  }

  /** A page of one file's text, cut at line ends when it is over `maxTokens`. */
  filePage(path: string, cursor: string | null, maxTokens: number): Page {
    const file = this.files.get(path);
    if (!file)
      throw new ScanError(
        'INVALID_REQUEST',
        `This scan has no textual file ${JSON.stringify(path)}; call list_scan_files for the paths it holds (non-textual files have no text).`,
      );
    const blocks = [{ path, text: file.content }];
    return pageOf(blocks, cursor, maxTokens, this.counter, () => this.counter.count(file.content));
  }

  private blocksOf(format: TextFormat): readonly Block[] {
    let blocks = this.blocks.get(format);
    if (blocks) return blocks;
    const renderer = RENDERERS[format];
    const list: Block[] = [];
    const head = renderer.head(this.ctx);
    if (head !== '') list.push({ path: null, text: head });
    const encoder = new TextEncoder();
    this.ordered.forEach((file, index) => {
      let text = '';
      for (const chunk of renderer.file(file.record, encoder.encode(file.content), index, this.ctx.lite)) {
        if (typeof chunk === 'string') text += chunk;
        else if (chunk instanceof Uint8Array) text += decoder.decode(chunk);
        else text += JSON.stringify(decoder.decode(chunk.jsonString));
      }
      // JSON's separator ends the previous block, so a file's block is its own line alone.
      const previous = list.at(-1);
      if (format === 'json' && text.startsWith(',\n') && previous) {
        list[list.length - 1] = { path: previous.path, text: `${previous.text},\n` };
        text = text.slice(2);
      }
      list.push({ path: file.record.path, text });
    });
    const tail = renderer.tail(this.ctx, this.ordered.length);
    if (tail !== '') list.push({ path: null, text: tail });
    this.blocks.set(format, (blocks = list));
    return blocks;
  }
}

const decoder = new TextDecoder();

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
 * Whole blocks while they fit, then the exact count of the page checked and blocks taken back
 * until it fits (a BPE count is not quite additive where two texts meet). A block that does not
 * fit alone is cut at the last line end that fits, or inside a line that alone is over the budget.
 */
function pageOf(
  blocks: readonly Block[],
  cursor: string | null,
  maxTokens: number,
  counter: TokenCounter,
  tokensOf: (index: number) => number,
): Page {
  if (blocks.length === 0) return { text: '', tokens: 0, files: [], cut_inside_file: false, next_cursor: null };
  const start = parseCursor(cursor, blocks);
  const first = blocks[start.block] as Block;
  const rest = start.offset === 0 ? first.text : first.text.slice(start.offset);
  const restTokens = start.offset === 0 ? tokensOf(start.block) : counter.count(rest);
  const paths = (from: number, to: number): string[] =>
    blocks
      .slice(from, to)
      .map((b) => b.path)
      .filter((p): p is string => p !== null);
  if (restTokens > maxTokens) {
    const end = cutWithin(first.text, start.offset, maxTokens, counter);
    const text = first.text.slice(start.offset, end);
    const done = end >= first.text.length;
    return {
      text,
      tokens: counter.count(text),
      files: paths(start.block, start.block + 1),
      cut_inside_file: first.path !== null && !done,
      next_cursor: done ? nextOf(blocks, start.block + 1) : `${start.block}.${end}`,
    };
  }
  const pieces = [rest];
  let sum = restTokens;
  let next = start.block + 1;
  while (next < blocks.length && sum + tokensOf(next) <= maxTokens) {
    sum += tokensOf(next);
    pieces.push((blocks[next] as Block).text);
    next++;
  }
  let text = pieces.join('');
  let tokens = counter.count(text);
  while (tokens > maxTokens && pieces.length > 1) {
    pieces.pop();
    next--;
    text = pieces.join('');
    tokens = counter.count(text);
  }
  return {
    text,
    tokens,
    files: paths(start.block, next),
    cut_inside_file: false,
    next_cursor: nextOf(blocks, next),
  };
}

function nextOf(blocks: readonly Block[], index: number): string | null {
  return index < blocks.length ? `${index}.0` : null;
}

/** The end (exclusive) of the longest run from `from` within `maxTokens`: at a line end if one fits, always past `from`. */
function cutWithin(text: string, from: number, maxTokens: number, counter: TokenCounter): number {
  const fits = (end: number): boolean => counter.count(text.slice(from, end)) <= maxTokens;
  const lineEnds: number[] = [];
  for (let i = text.indexOf('\n', from); i !== -1 && i < text.length - 1; i = text.indexOf('\n', i + 1))
    lineEnds.push(i + 1);
  let lo = 0;
  let hi = lineEnds.length - 1;
  let best = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (fits(lineEnds[mid] as number)) {
      best = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  if (best >= 0) return lineEnds[best] as number;
  // One line alone is over the budget: the longest run of characters that fits, never half a pair.
  const lineEnd = lineEnds[0] ?? text.length;
  let low = from + 1;
  let high = lineEnd;
  let end = from + 1;
  while (low <= high) {
    const mid = (low + high) >> 1;
    if (fits(mid)) {
      end = mid;
      low = mid + 1;
    } else high = mid - 1;
  }
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff && end < text.length) end += end - 1 > from ? -1 : 1;
  return end;
}
