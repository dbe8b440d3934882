import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import { open, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { ScanError } from '@reposcan/contracts/error-codes';
import { partNumberText } from '@reposcan/contracts/vocabulary';
import type { TextFormat } from '@reposcan/contracts/vocabulary';
import { displayPath } from '../render/display-path.js';
import { inlineCode } from '../render/markdown-fence.js';
import { markdownRenderer } from '../render/render-markdown.js';
import type { FilePiece, FormatRenderer, HeadContext, RenderContext, RenderedChunk } from '../render/render-context.js';
import { txtRenderer } from '../render/render-txt.js';
import { LONGEST_TOKEN_BYTES } from '../tokens/bpe-engine.js';
import type { CountTokens } from '../tokens/token-pool.js';
import type { ScannedFileRecord } from '../types.js';
import {
  CommaLines,
  EMPTY_TALLY,
  EscapedText,
  extendTally,
  joinsCleanly,
  RangeCounter,
  rangeMarks,
  ShownText,
  tallyTotal,
} from './part-tally.js';
import type { CountUtf8, RangeMarks, Segment, Tally } from './part-tally.js';
import { writeAll } from '../io/write-all.js';
import type { ContentSpool, ReadSpooled, SpooledFile } from './content-spool.js';

/** One written part of a text output. */
export interface WrittenPart {
  format: TextFormat;
  /** From 1. */
  part: number;
  /** File name inside the output folder. */
  file: string;
  bytes: number;
  sha256: string;
  /** Exact token count of the whole part in the scan's encoding. */
  tokens: number;
}

/** One format's parts; `bytes` and `sha256` are those of its parts one after the other, in order. */
export interface PartedOutput {
  format: TextFormat;
  bytes: number;
  sha256: string;
  parts: WrittenPart[];
}

/** How every part's file name starts. */
export const PART_FILE_PREFIX = 'output.part-' as const;

/** `output.part-01.txt` (of up to 99 parts), `output.part-001.txt` (of 100 to 999): every name of one output sorts in part order. */
export function partFileName(
  format: TextFormat,
  part: number,
  parts: number,
): `${typeof PART_FILE_PREFIX}${number}.${TextFormat}` {
  return `${PART_FILE_PREFIX}${partNumberText(part, parts)}.${format}` as `${typeof PART_FILE_PREFIX}${number}.${TextFormat}`;
}

type UnitKind = 'head' | 'file' | 'tail';

/** Something that goes into parts in one piece if it can, else cut at lines (a longer line at a character). */
interface Unit {
  kind: UnitKind;
  text: Uint8Array;
  /** Exact count of the unit as a part holds it (JSON: escaped), when known: how many pieces a cut makes is guessed from it. */
  tokens?: number;
  /** The part header's line for it (txt, md); null for JSON, whose objects name themselves. */
  label: (piece: FilePiece | undefined) => string | null;
  /**
   * The unit, or its piece text[from, to), as it appears in a part; `state` is what the part holds
   * so far. Once `prepareCut` has run, pieces carry their exact counts.
   */
  render: (from: number, to: number, piece: FilePiece | undefined, state: PartState) => Segment[];
  /** Counts the unit once so that any piece's count costs little (RangeCounter). */
  prepareCut?: (count: CountUtf8) => Promise<void>;
}

/** The range marks of `bytes`; with `file`, the raw content of that file, counted once for every format. */
type MarksOf = (bytes: Uint8Array, file?: number) => Promise<RangeMarks>;

/** JSON: whether the part's `files` array is not opened yet, open, or already closed by the tail. */
type PartState = 'start' | 'files' | 'closed';

interface Layout {
  format: TextFormat;
  top: (part: number) => string;
  line: (label: string) => string;
  bottom: string;
  closing: (part: number, state: PartState) => string;
}

const utf8 = (text: string): Uint8Array => Buffer.from(text, 'utf8');
const seg = (text: string): Segment => ({ bytes: utf8(text) });

function layoutFor(format: TextFormat, repoName: string): Layout {
  const name = displayPath(repoName);
  if (format === 'txt')
    return {
      format,
      top: (k) => `Part ${k} of ${name} (txt). In this part, in tree order:\n`,
      line: (label) => `- ${label}\n`,
      bottom: `${'-'.repeat(64)}\n\n`,
      closing: () => '',
    };
  if (format === 'md')
    return {
      format,
      top: (k) => `<!-- reposcan part ${k} -->\n**Part ${k}** of ${inlineCode(name)}. In this part, in tree order:\n\n`,
      line: (label) => `- ${label}\n`,
      bottom: '\n---\n\n',
      closing: () => '',
    };
  return {
    format,
    top: () => '{\n',
    line: () => '',
    bottom: '',
    closing: (k, state) => `${state === 'files' ? '],\n' : state === 'start' ? '"files":[],\n' : ''}"part":${k}}\n`,
  };
}

function chunksToSegments(chunks: Iterable<RenderedChunk>, content: Uint8Array, tokens: number | undefined): Segment[] {
  const out: Segment[] = [];
  for (const chunk of chunks) {
    if (typeof chunk === 'string') out.push(seg(chunk));
    else if ('jsonString' in chunk) throw new Error('Parts render JSON strings themselves');
    else out.push(chunk === content && tokens !== undefined ? { bytes: chunk, tokens } : { bytes: chunk });
  }
  return out;
}

const pieceNote = (piece: FilePiece | undefined, what: string): string =>
  piece ? ` (${what}part ${piece.part} of ${piece.parts})` : '';

/** One file's unit in `format`: `content` is the file's, `index` its place in the spool. */
function fileUnit(
  format: TextFormat,
  record: ScannedFileRecord,
  content: Uint8Array,
  index: number,
  lite: boolean,
  json: EscapedCounts | null,
  marksOf: MarksOf,
): Unit {
  const label = (piece: FilePiece | undefined): string =>
    `${format === 'md' ? inlineCode(displayPath(record.path)) : displayPath(record.path)}${pieceNote(piece, 'this file: ')}`;
  if (format === 'json') {
    const meta = JSON.stringify(lite ? { path: record.path } : record).slice(0, -1);
    const whole = json?.tokens[index];
    const shown = new ShownText(content, (text) => new EscapedText(text), whole);
    return {
      kind: 'file',
      text: content,
      tokens: whole,
      label: () => null,
      render: (from, to, piece, state) => {
        const part = piece ? `,"file_part":${JSON.stringify(piece)}` : '';
        const lead = state === 'files' ? ',' : '"files":[\n';
        return [seg(`${lead}${meta}${part},"content":"`), shown.piece(from, to), seg('"}\n')];
      },
      prepareCut: (count) => {
        const known = json?.marks.get(index);
        return shown.prepare(count, (bytes) => (known ? Promise.resolve(known) : marksOf(bytes)));
      },
    };
  }
  let ranges: RangeCounter | undefined;
  const renderer = format === 'txt' ? txtRenderer : markdownRenderer;
  return {
    kind: 'file',
    text: content,
    tokens: record.tokens,
    label,
    render: (from, to, piece) => {
      const text = content.subarray(from, to);
      const tokens = from === 0 && to === content.length ? record.tokens : ranges?.range(from, to);
      return chunksToSegments(renderer.file(record, text, lite, piece), text, tokens);
    },
    prepareCut: async (count) => {
      ranges ??= new RangeCounter(content, count, await marksOf(content, index));
    },
  };
}

/**
 * The units of one format, in order: the head (repository, tree), each file as the spool gets it,
 * the tail (totals) once `whole` gives them.
 */
async function* unitsFor(
  format: TextFormat,
  ctx: HeadContext,
  whole: Promise<RenderContext>,
  spool: ContentSpool,
  read: ReadSpooled,
  json: EscapedCounts | null,
  marksOf: MarksOf,
): AsyncGenerator<Unit> {
  const lite = ctx.lite;
  if (format === 'json') {
    const repoLines = lite
      ? ''
      : `"repository":${JSON.stringify(ctx.repository)},\n"encoding":${JSON.stringify(ctx.encoding)},\n`;
    const tree = utf8(ctx.tree ?? '');
    const shown = new ShownText(tree, (text) => new EscapedText(text));
    if (repoLines !== '' || ctx.tree !== null)
      yield {
        kind: 'head',
        text: tree,
        label: () => null,
        render: (from, to, piece) => {
          const lines = piece === undefined || piece.part === 1 ? repoLines : '';
          if (ctx.tree === null) return [seg(lines)];
          const part = piece ? `"tree_part":${JSON.stringify(piece)},\n` : '';
          return [seg(`${lines}${part}"tree":"`), shown.piece(from, to), seg('",\n')];
        },
        prepareCut: (count) => shown.prepare(count, marksOf),
      };
  } else {
    const renderer: FormatRenderer = format === 'txt' ? txtRenderer : markdownRenderer;
    const head = renderer.head(ctx);
    if (head !== '')
      yield asIs(
        'head',
        utf8(head),
        (piece) => `[${lite ? '' : 'repository and '}directory tree]${pieceNote(piece, '')}`,
        marksOf,
      );
  }
  for (let index = 0; await spool.ready(index); index++) {
    const file = spool.spooled[index] as SpooledFile;
    yield fileUnit(format, file.record, await read(file), index, lite, json, marksOf);
  }
  const done = await whole;
  if (format === 'json') {
    if (lite) return;
    const rows = utf8(done.assets.map((asset) => JSON.stringify(asset)).join('\n'));
    // The rows as the part's array shows them, each after the first behind a comma.
    const shown = new ShownText(rows, (text) => new CommaLines(text));
    yield {
      kind: 'tail',
      text: rows,
      label: () => null,
      render: (from, to, piece, state) => {
        const lead = state === 'files' ? '],\n' : state === 'start' ? '"files":[],\n' : '';
        const part = piece ? `"assets_part":${JSON.stringify(piece)},\n` : '';
        const head = `${lead}"summary":${JSON.stringify(done.summary)},\n"skipped_count":${done.skippedCount},\n${part}"assets":`;
        // A piece ends after a line's newline (and its comma): the rows are what is before them.
        const list = shown.piece(from, to, to > from && rows[to - 1] === 0x0a ? 2 : 0);
        return list.bytes.length === 0 ? [seg(`${head}[],\n`)] : [seg(`${head}[\n`), list, seg('\n],\n')];
      },
      prepareCut: (count) => shown.prepare(count, marksOf),
    };
    return;
  }
  const renderer = format === 'txt' ? txtRenderer : markdownRenderer;
  const tail = renderer.tail(done, spool.spooled.length);
  if (tail !== '')
    yield asIs(
      'tail',
      utf8(tail),
      (piece) =>
        `[${format === 'md' && ctx.lite ? 'closing note' : 'non-textual files and summary'}]${pieceNote(piece, '')}`,
      marksOf,
    );
}

/**
 * The head or tail of txt and md as it is, a piece of it after a line saying which piece it is
 * when it is not the first (that line also starts the part's body where the header's count adds up).
 */
function asIs(
  kind: UnitKind,
  text: Uint8Array,
  label: (piece: FilePiece | undefined) => string,
  marksOf: MarksOf,
): Unit {
  let ranges: RangeCounter | undefined;
  return {
    kind,
    text,
    label,
    render: (from, to, piece) => {
      const body = { bytes: text.subarray(from, to), tokens: ranges?.range(from, to) };
      return piece && piece.part > 1 ? [seg(`(continued: part ${piece.part} of ${piece.parts})\n`), body] : [body];
    },
    prepareCut: async (count) => {
      ranges ??= new RangeCounter(text, count, await marksOf(text));
    },
  };
}

interface OpenPart {
  part: number;
  /** Tokens of the header's top and every line but the last. */
  headerTokens: number;
  lastLine: string | null;
  lines: string[];
  tally: Tally;
  segments: Segment[];
  state: PartState;
  units: number;
  /** The whole part's exact count, as last measured. */
  tokens: number;
}

interface Candidate {
  headerTokens: number;
  lastLine: string | null;
  tally: Tally;
  segments: Segment[];
  state: PartState;
  tokens: number;
}

export interface PartWriterOptions {
  outDir: string;
  format: TextFormat;
  repoName: string;
  budget: number;
  count: CountUtf8;
}

/**
 * Writes one format's parts: units go into the open part while its exact count stays within the
 * budget; a unit that does not fit starts the next part, and one that fits no part alone is cut.
 * Each part is held (as references to its segments) until it closes, then written with its header.
 */
class PartWriter {
  private current: OpenPart | null = null;
  private readonly layout: Layout;
  readonly written: WrittenPart[] = [];
  /** Parts written and being synced to disk. */
  readonly syncing = new Set<Promise<void>>();
  /** Every part's bytes, in order: the format's sha256. */
  readonly whole = createHash('sha256');

  constructor(private readonly options: PartWriterOptions) {
    this.layout = layoutFor(options.format, options.repoName);
  }

  private count(text: string): number {
    return this.options.count(utf8(text));
  }

  private fresh(part: number): OpenPart {
    const top = this.layout.top(part);
    return {
      part,
      headerTokens: this.count(top),
      lastLine: null,
      lines: [],
      tally: EMPTY_TALLY,
      segments: [],
      state: 'start',
      units: 0,
      tokens: 0,
    };
  }

  /** The part with `segments` (and the header line `label`) added, and its exact count. */
  private measure(part: OpenPart, segments: Segment[], label: string | null, state: PartState): Candidate {
    const { layout } = this;
    let headerTokens = part.headerTokens;
    let lastLine = part.lastLine;
    if (label !== null) {
      if (lastLine !== null) headerTokens += this.count(lastLine);
      lastLine = layout.line(label);
    }
    const headerEnd = lastLine === null ? layout.bottom : `${lastLine}${layout.bottom}`;
    const header = this.count(headerEnd) + headerTokens;
    const body = part.segments.length === 0 ? segments : null;
    // The header's last byte and the body's first must be a proven boundary, so the two add up.
    const first = (body ?? part.segments).find((s) => s.bytes.length > 0);
    const headerText = utf8(`${layout.top(part.part)}${headerEnd}`);
    if (first && !joinsCleanly(headerText, first.bytes))
      throw new Error(`A ${layout.format} part's header does not join its body at a piece boundary`);
    const tally = extendTally(part.tally, segments, this.options.count);
    const tokens = header + tallyTotal(tally, utf8(layout.closing(part.part, state)), this.options.count);
    return { headerTokens, lastLine, tally, segments, state, tokens };
  }

  private commit(part: OpenPart, candidate: Candidate, label: string | null): void {
    part.headerTokens = candidate.headerTokens;
    part.lastLine = candidate.lastLine;
    if (label !== null) part.lines.push(label);
    part.tally = candidate.tally;
    part.segments.push(...candidate.segments);
    part.state = candidate.state;
    part.tokens = candidate.tokens;
    part.units++;
  }

  private nextState(kind: UnitKind, state: PartState): PartState {
    if (this.options.format !== 'json') return state;
    return kind === 'file' ? 'files' : kind === 'tail' ? 'closed' : state;
  }

  /** Tries the whole unit (or a piece) in `part`; commits it when it fits. */
  private tryAdd(part: OpenPart, unit: Unit, from: number, to: number, piece?: FilePiece): boolean {
    const label = unit.label(piece);
    const state = this.nextState(unit.kind, part.state);
    const candidate = this.measure(part, unit.render(from, to, piece, part.state), label, state);
    if (candidate.tokens > this.options.budget) return false;
    this.commit(part, candidate, label);
    return true;
  }

  async add(unit: Unit): Promise<void> {
    const whole = unit.text.length;
    if (this.current && this.current.units > 0) {
      if (this.tryAdd(this.current, unit, 0, whole)) return;
      await this.close();
    }
    this.current ??= this.fresh(this.written.length + 1);
    if (this.tryAdd(this.current, unit, 0, whole)) return;
    await unit.prepareCut?.(this.options.count);
    await this.addCut(unit);
  }

  /** A unit that fits no part alone: pieces of as many whole lines as fit, each in a part of its own but the last. */
  private async addCut(unit: Unit): Promise<void> {
    // The number of pieces is in every piece's note: cut again until the count written is the count made.
    let parts = Math.max(2, Math.ceil((unit.tokens ?? unit.text.length / 3) / this.options.budget));
    let cuts: number[] = [];
    for (let attempt = 0; attempt < 6; attempt++) {
      cuts = this.cutPoints(unit, parts);
      if (cuts.length === parts) break;
      parts = cuts.length;
    }
    if (cuts.length !== parts) throw new Error('Cutting a file into parts did not settle on a number of pieces');
    let from = 0;
    for (let k = 1; k <= parts; k++) {
      const to = cuts[k - 1] as number;
      if (k > 1) {
        await this.close();
        this.current = this.fresh(this.written.length + 1);
      }
      const part = this.current as OpenPart;
      if (!this.tryAdd(part, unit, from, to, { part: k, parts }))
        throw new Error('A piece measured to fit did not fit');
      from = to;
    }
  }

  /** Where each piece ends, when the unit is cut into pieces that say `of parts`. */
  private cutPoints(unit: Unit, parts: number): number[] {
    const text = unit.text;
    const ends: number[] = [];
    for (let from = 0, k = 1; from < text.length; k++) {
      const partNo = this.written.length + (this.current?.units ? 1 : 0) + k;
      const fits = (to: number): boolean => {
        const probe = this.fresh(partNo);
        const piece = { part: k, parts };
        const label = unit.label(piece);
        const candidate = this.measure(
          probe,
          unit.render(from, to, piece, 'start'),
          label,
          this.nextState(unit.kind, 'start'),
        );
        return candidate.tokens <= this.options.budget;
      };
      const to = largestFit(text, from, fits, this.options.budget);
      if (to <= from)
        throw new ScanError(
          'PART_BUDGET_TOO_SMALL',
          `max_tokens_per_part ${this.options.budget} cannot hold even one character of ${unit.kind === 'file' ? 'a file' : `the ${unit.kind === 'head' ? 'directory tree' : 'summary'}`} with its part and block headers in the ${this.options.format} output; raise max_tokens_per_part.`,
        );
      ends.push(to);
      from = to;
    }
    return ends;
  }

  /** Writes the open part, header first, and forgets it. */
  async close(): Promise<void> {
    const part = this.current;
    this.current = null;
    if (part === null || part.units === 0) return;
    await this.write(part);
  }

  /** An output with nothing to hold (lite json of no file, no tree) is still one part, as it is one file. */
  async closeLast(): Promise<void> {
    if (this.written.length === 0 && (this.current === null || this.current.units === 0)) {
      const part = this.current ?? this.fresh(1);
      this.current = null;
      part.tokens = this.measure(part, [], null, part.state).tokens;
      await this.write(part);
      return;
    }
    await this.close();
  }

  private async write(part: OpenPart): Promise<void> {
    const { layout } = this;
    const header = `${layout.top(part.part)}${part.lines.map((l) => layout.line(l)).join('')}${layout.bottom}`;
    // How many parts there will be is known only at the end: named as if this were the last,
    // renamed by `renameForCount` once the count is over 99.
    const file = partFileName(layout.format, part.part, part.part);
    const handle = await open(join(this.options.outDir, file), 'wx');
    const hash = createHash('sha256');
    let bytes = 0;
    try {
      const pieces = [utf8(header), ...part.segments.map((s) => s.bytes), utf8(layout.closing(part.part, part.state))];
      for (let i = 0; i < pieces.length;) {
        // Small segments go out together, in writes of about a megabyte.
        let size = 0;
        let j = i;
        while (j < pieces.length && (j === i || size + (pieces[j] as Uint8Array).length <= 1 << 20))
          size += (pieces[j++] as Uint8Array).length;
        const data = j - i === 1 ? (pieces[i] as Uint8Array) : Buffer.concat(pieces.slice(i, j));
        hash.update(data);
        this.whole.update(data);
        bytes += data.length;
        await writeAll(handle, data);
        i = j;
      }
    } catch (error) {
      await handle.close();
      throw error;
    }
    // Synced in the background, a few at a time: one sync after another cost a second per hundred parts.
    const synced = handle.datasync().finally(() => handle.close());
    this.syncing.add(synced);
    void synced.then(
      () => this.syncing.delete(synced),
      () => undefined,
    );
    if (this.syncing.size >= SYNCS_IN_FLIGHT) await Promise.race(this.syncing);
    this.written.push({
      format: layout.format,
      part: part.part,
      file,
      bytes,
      sha256: hash.digest('hex'),
      tokens: part.tokens,
    });
  }
}

/**
 * The furthest end after `from` such that `fits`: the end of a whole line where one fits, else a
 * character boundary inside the first line. `from` itself when not even one character fits.
 */
function largestFit(text: Uint8Array, from: number, fits: (to: number) => boolean, budget: number): number {
  // Line ends (after each `\n`) within reach, from 4 bytes a token up to 16 (rarely more in a piece
  // of `budget` tokens); the reach doubles while the last line end in it still fits.
  const limit = Math.min(text.length, from + budget * 16);
  const charStart = (at: number): number => {
    while (at > from && ((text[at] as number) & 0xc0) === 0x80) at--;
    return at;
  };
  // The whole rest, when it is within reach. Past it, only when even the reach's end fits (a longer
  // piece holds at least as many tokens) and the rest is not over `budget` of the longest tokens:
  // counting the whole rest for every piece would make cutting a text without line ends quadratic.
  const wholeFits =
    limit === text.length
      ? fits(text.length)
      : text.length - from <= budget * LONGEST_TOKEN_BYTES && fits(charStart(limit)) && fits(text.length);
  if (wholeFits) return text.length;
  let lineEnds: number[] = [];
  let best: number | null;
  for (let reach = Math.min(limit, from + budget * 4); ; reach = Math.min(limit, from + 2 * (reach - from))) {
    lineEnds = [];
    for (let i = text.indexOf(0x0a, from); i >= 0 && i < reach && i + 1 < text.length; i = text.indexOf(0x0a, i + 1))
      lineEnds.push(i + 1);
    best = searchLargest(lineEnds.length, (k) => lineEnds[k] as number, fits);
    if (reach === limit || best === null || best !== lineEnds.at(-1)) break;
  }
  if (best !== null) return best;
  // Not even the first line fits: cut it at a character boundary (never inside a UTF-8 sequence),
  // searching byte offsets within reach, each moved back to the start of its character.
  const lineEnd = Math.min(lineEnds[0] ?? limit, limit);
  const cut = searchLargest(Math.max(0, lineEnd - from - 1), (k) => charStart(from + 1 + k), fits);
  return cut !== null && cut > from ? cut : from;
}

/** The largest of the ascending `endAt(0 … count-1)` for which `fits` holds, assuming it holds up to a point; null when none. */
function searchLargest(count: number, endAt: (k: number) => number, fits: (to: number) => boolean): number | null {
  let lo = -1;
  let hi = count;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (fits(endAt(mid))) lo = mid;
    else hi = mid;
  }
  return lo < 0 ? null : endAt(lo);
}

export interface WritePartsInput {
  outDir: string;
  repoName: string;
  budget: number;
  /** What the heads show, known once the walk is over. */
  head: HeadContext;
  /** Everything the tails show too, once every file is counted (rejected if the scan fails). */
  whole: Promise<RenderContext>;
  /** The textual files' contents, followed while the scan still adds to it. */
  spool: ContentSpool;
  count: CountUtf8;
  /** The token threads: JSON-escaped contents are counted there, in batches. */
  countBatch?: CountTokens;
  formats?: readonly TextFormat[];
  signal?: AbortSignal;
}

/** Parts synced to disk at once. */
const SYNCS_IN_FLIGHT = 16;

/** Batches of about this many bytes of escaped contents go to the token threads, a few at a time. */
const BATCH_BYTES = 1 << 20;
const BATCHES_IN_FLIGHT = 4;

/** Every file's JSON-escaped content counted (by file, in order), and the range marks of those that may need cutting. */
interface EscapedCounts {
  tokens: number[];
  marks: Map<number, RangeMarks>;
}

/**
 * Every file's content as the inside of a JSON string, counted. A content of more bytes than the
 * budget may not fit a part (a token is at least a byte), so it is counted stretch by stretch: the
 * marks it needs if cut, and its whole count as their sum, for one count instead of two.
 */
async function countEscaped(
  spool: ContentSpool,
  read: ReadSpooled,
  countBatch: CountTokens,
  budget: number,
  count: CountUtf8,
  signal?: AbortSignal,
): Promise<EscapedCounts> {
  const counts: number[] = [];
  const marks = new Map<number, RangeMarks>();
  const inFlight = new Set<Promise<void>>();
  const track = async (done: Promise<void>): Promise<void> => {
    inFlight.add(done);
    void done.finally(() => inFlight.delete(done)).catch(() => undefined);
    if (inFlight.size >= BATCHES_IN_FLIGHT) await Promise.race(inFlight);
  };
  let batch: Uint8Array[] = [];
  let indices: number[] = [];
  let size = 0;
  const send = async (): Promise<void> => {
    const [contents, at] = [batch, indices];
    [batch, indices, size] = [[], [], 0];
    await track(
      Promise.resolve(countBatch(contents, signal)).then((result) => {
        result.forEach((n, i) => (counts[at[i] as number] = n));
      }),
    );
  };
  for (let i = 0; await spool.ready(i); i++) {
    const escaped = new EscapedText(await read(spool.spooled[i] as SpooledFile)).bytes;
    if (escaped.length > budget) {
      await track(
        rangeMarks(escaped, count, (stretches) => countBatch(stretches, signal)).then((found) => {
          marks.set(i, found);
          counts[i] = found.sums.at(-1) as number;
        }),
      );
      continue;
    }
    batch.push(escaped);
    indices.push(i);
    size += escaped.length;
    if (size >= BATCH_BYTES) await send();
  }
  if (batch.length > 0) await send();
  await Promise.all(inFlight);
  return { tokens: counts, marks };
}

/**
 * Gives every part the name of its number at the width of the count. A name only ever changes to
 * one of the same number, so no rename can take another part's name, whatever the order.
 */
async function renameForCount(outDir: string, parts: WrittenPart[]): Promise<void> {
  for (const part of parts) {
    const file = partFileName(part.format, part.part, parts.length);
    if (file === part.file) continue;
    await rename(join(outDir, part.file), join(outDir, file));
    part.file = file;
  }
}

/**
 * Every text format's parts (txt, md, json), files in tree order. The formats are written side by
 * side while the scan still runs: txt and md take each file as the spool gets it, and the JSON
 * contents are counted as they come; JSON's parts follow once every count is known.
 */
export async function writeParts(input: WritePartsInput): Promise<PartedOutput[]> {
  const { spool, countBatch, signal } = input;
  const formats = input.formats ?? (['txt', 'md', 'json'] as const);
  const jsonCounting =
    formats.includes('json') && countBatch
      ? countEscaped(spool, spool.reader(), countBatch, input.budget, input.count, signal)
      : null;
  // Its failure is awaited below; until then it must not count as unhandled.
  jsonCounting?.catch(() => undefined);
  // A file too big for one part is counted stretch by stretch on the token threads, once for txt and md.
  const countStretches = countBatch && ((stretches: Uint8Array[]) => countBatch(stretches, signal));
  const rawMarks = new Map<number, Promise<RangeMarks>>();
  const marksOf: MarksOf = (bytes, file) => {
    if (file === undefined) return rangeMarks(bytes, input.count, countStretches);
    let marks = rawMarks.get(file);
    if (!marks) {
      const known = spool.spooled[file]?.marks;
      marks = known ? Promise.resolve(known) : rangeMarks(bytes, input.count, countStretches);
      rawMarks.set(file, marks);
    }
    return marks;
  };
  const writeFormat = async (format: TextFormat): Promise<PartedOutput> => {
    const json = format === 'json' && jsonCounting ? await jsonCounting : null;
    const writer = new PartWriter({
      outDir: input.outDir,
      format,
      repoName: input.repoName,
      budget: input.budget,
      count: input.count,
    });
    for await (const unit of unitsFor(format, input.head, input.whole, spool, spool.reader(), json, marksOf)) {
      signal?.throwIfAborted();
      await writer.add(unit);
    }
    await writer.closeLast();
    await Promise.all(writer.syncing);
    await renameForCount(input.outDir, writer.written);
    return {
      format,
      bytes: writer.written.reduce((sum, part) => sum + part.bytes, 0),
      sha256: writer.whole.digest('hex'),
      parts: writer.written,
    };
  };
  // Every format settles before this does: a caller cleaning up after a failure must find no writer still at work.
  const settled = await Promise.allSettled(formats.map(writeFormat));
  const failed = settled.find((outcome) => outcome.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((outcome) => (outcome as PromiseFulfilledResult<PartedOutput>).value);
}
