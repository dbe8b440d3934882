// A spliced output: an output stored as stretches of other files (its pieces) instead of as one
// file. A rescan of a new commit that carries an earlier scan's outputs forward (carry-forward.ts)
// changes a few blocks and every link in them: written out whole, each rescan would copy and
// store the hundreds of megabytes that did not change. Spliced, it writes what changed (the head,
// the links, the changed blocks, the tail) to a piece of its own and refers to the earlier
// output's bytes for the rest, through hard links to the earlier pieces in its own folder: the
// earlier scan can be deleted (or expire) without the later one losing a byte, and the file
// system frees a piece when no scan links it any more.
//
// On disk, for output `output.<format>`: `output.<format>.splice` (JSON: the output's length, its
// pieces' names and its ranges) and the pieces `output.<format>.piece-<n>`, all in the result folder.
import { constants } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { basename, dirname, join } from 'node:path';
import { countLeading } from '../sorted-search.js';

/** How a spliced output is made: `ranges` holds [piece, start, length] triples, in output order. */
export interface Splice {
  format: 1;
  bytes: number;
  pieces: string[];
  ranges: number[];
}

/** The name of the file that describes output `file` when it is spliced. */
export function spliceFileName<F extends string>(file: F): `${F}.splice` {
  return `${file}.splice`;
}

/** The name of piece `n` of spliced output `file`. */
export function pieceFileName(file: string, n: number): string {
  return `${file}.piece-${n}`;
}

/** Whether `name` is a piece of spliced output `file`. */
function isPieceOf(name: unknown, file: string): boolean {
  const prefix = `${file}.piece-`;
  return typeof name === 'string' && name.startsWith(prefix) && /^(?:0|[1-9]\d{0,5})$/.test(name.slice(prefix.length));
}

/** Whether `name` is a spliced output's description or piece, for output file `file`. */
export function isSpliceFileOf(name: string, file: string): boolean {
  return name === spliceFileName(file) || isPieceOf(name, file);
}

/** Reads and checks the description of spliced output `file` (its pieces can only be its own pieces, beside it). */
export function parseSplice(json: string, file: string): Splice {
  const splice = JSON.parse(json) as Splice;
  const { bytes, pieces, ranges } = splice;
  let valid =
    splice.format === 1 &&
    Array.isArray(pieces) &&
    pieces.every((p) => isPieceOf(p, file)) &&
    Array.isArray(ranges) &&
    ranges.length % 3 === 0;
  let total = 0;
  for (let i = 0; valid && i < ranges.length; i += 3) {
    const [piece, start, length] = [ranges[i], ranges[i + 1], ranges[i + 2]];
    valid = isCount(piece) && piece < pieces.length && isCount(start) && isCount(length);
    total += length as number;
  }
  if (!valid || total !== bytes) throw new Error('not a valid description of a spliced output');
  return splice;
}

function isCount(n: unknown): n is number {
  return Number.isSafeInteger(n) && (n as number) >= 0;
}

/** Where each range starts in the output. */
function rangeStarts(splice: Splice): number[] {
  const starts: number[] = [];
  for (let i = 0, at = 0; i < splice.ranges.length; i += 3) {
    starts.push(at);
    at += splice.ranges[i + 2] as number;
  }
  return starts;
}

/**
 * An output read by position, whether it is one file or spliced: what downloads, digest pages and
 * a later rescan read outputs through.
 */
export interface OutputSource {
  /** The output's path (`output.<format>`, whether or not that file exists). */
  readonly path: string;
  readonly size: number;
  /** Fills `into` from `position` on, as far as the output goes; how many bytes that was. */
  read(into: Uint8Array, position: number): Promise<number>;
  /** The output as a spliced one, or null when it is one file. */
  readonly splice: Splice | null;
  close(): Promise<void>;
}

/**
 * Opens output `path` (`<result folder>/output.<format>`): the file itself, or the spliced output
 * described beside it. Rejects with ENOENT when there is neither.
 */
export async function openOutput(path: string): Promise<OutputSource> {
  try {
    const handle = await open(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
    try {
      return new FileOutput(path, handle, (await handle.stat()).size);
    } catch (error) {
      await handle.close();
      throw error;
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    const json = await readFile(spliceFileName(path), 'utf8');
    return SplicedOutput.open(path, parseSplice(json, basename(path)));
  }
}

class FileOutput implements OutputSource {
  readonly splice = null;
  constructor(
    readonly path: string,
    private readonly handle: FileHandle,
    readonly size: number,
  ) {}

  async read(into: Uint8Array, position: number): Promise<number> {
    let filled = 0;
    while (filled < into.byteLength && position + filled < this.size) {
      const { bytesRead } = await this.handle.read(into, filled, into.byteLength - filled, position + filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return filled;
  }

  close(): Promise<void> {
    return this.handle.close();
  }
}

const PIECE_WINDOW_BYTES = 1 << 20;

/**
 * Windows and read buffers, kept for the next output read here: a fresh megabyte per piece and read
 * is freed only by a full collection, and a worker's memory crept up by 3 MB a rescan until then.
 */
const spareBuffers: Buffer[] = [];
const MAX_SPARE_BUFFERS = 4;

function takeBuffer(): Buffer {
  return spareBuffers.pop() ?? Buffer.allocUnsafe(PIECE_WINDOW_BYTES);
}

function giveBack(buffer: Buffer | null): void {
  if (buffer !== null && spareBuffers.length < MAX_SPARE_BUFFERS) spareBuffers.push(buffer);
}

/** A piece open for reading, with the window of it read last. */
interface Piece {
  name: string;
  handle: FileHandle;
  window: Buffer | null;
  start: number;
  length: number;
}

/** Fills `into` from `piece` at `position`, or throws DamagedSpliceError when the piece ends first. */
async function readFully(piece: Piece, into: Uint8Array, position: number): Promise<void> {
  for (let filled = 0; filled < into.byteLength;) {
    const { bytesRead } = await piece.handle.read(into, filled, into.byteLength - filled, position + filled);
    if (bytesRead === 0) throw new DamagedSpliceError(`${piece.name} is shorter than its output says`);
    filled += bytesRead;
  }
}

/** A piece shorter than its output's description says: nothing read through it is to be trusted. */
export class DamagedSpliceError extends Error {
  override readonly name = 'DamagedSpliceError';
}

class SplicedOutput implements OutputSource {
  readonly size: number;
  /** Where each range starts in the output (rangeStarts). */
  readonly starts: number[];

  /** Every piece is opened at once: like an open file, the output then outlives its folder's removal. */
  private constructor(
    readonly path: string,
    readonly splice: Splice,
    private readonly pieces: Piece[],
  ) {
    this.size = splice.bytes;
    this.starts = rangeStarts(splice);
  }

  static async open(path: string, splice: Splice): Promise<SplicedOutput> {
    const pieces: Piece[] = [];
    try {
      for (const name of splice.pieces) {
        const handle = await open(join(dirname(path), name), constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
        pieces.push({ name, handle, window: null, start: 0, length: 0 });
      }
    } catch (error) {
      await Promise.allSettled(pieces.map((p) => p.handle.close()));
      throw error;
    }
    return new SplicedOutput(path, splice, pieces);
  }

  async read(into: Uint8Array, position: number): Promise<number> {
    const { ranges } = this.splice;
    const { starts } = this;
    if (position >= this.size) return 0;
    let filled = 0;
    for (
      let r = countLeading(starts.length, (i) => (starts[i] as number) <= position) - 1;
      r >= 0 && r < starts.length && filled < into.byteLength;
      r++
    ) {
      const at = Math.max(position + filled, starts[r] as number) - (starts[r] as number);
      const n = Math.min((ranges[3 * r + 2] as number) - at, into.byteLength - filled);
      const piece = this.pieces[ranges[3 * r] as number] as Piece;
      const from = (ranges[3 * r + 1] as number) + at;
      const window = piece.window;
      // Most ranges are short and lie in the piece's window: copied without a read or an await.
      if (window !== null && from >= piece.start && from + n <= piece.start + piece.length)
        into.set(window.subarray(from - piece.start, from - piece.start + n), filled);
      else await readPiece(piece, from, into.subarray(filled, filled + n));
      filled += n;
    }
    return filled;
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.pieces.map((p) => p.handle.close()));
    for (const piece of this.pieces) {
      giveBack(piece.window);
      piece.window = null;
    }
  }
}

/** Fills `into` from `piece` at `start`, through the piece's window unless it is at least as large. */
async function readPiece(piece: Piece, start: number, into: Uint8Array): Promise<void> {
  if (into.byteLength >= PIECE_WINDOW_BYTES) return readFully(piece, into, start);
  piece.window ??= takeBuffer();
  piece.start = start;
  piece.length = (await piece.handle.read(piece.window, 0, PIECE_WINDOW_BYTES, start)).bytesRead;
  if (piece.length < into.byteLength) return readFully(piece, into, start);
  into.set(piece.window.subarray(0, into.byteLength));
}

/**
 * Appends to `into` the ranges that hold bytes [start, end) of `from` (a spliced output, or one
 * file of `size` bytes: its piece 0), each of its pieces numbered anew by `piece`.
 */
export function rangesOf(
  from: { splice: Splice; starts: number[] } | { splice: null; size: number },
  start: number,
  end: number,
  piece: (n: number) => number,
  into: number[],
): void {
  if (end <= start) return;
  if (from.splice === null) {
    if (end > from.size) throw new DamagedSpliceError('an earlier output is shorter than its layout');
    return appendRange(into, piece(0), start, end - start);
  }
  const { splice, starts } = from;
  if (end > splice.bytes) throw new DamagedSpliceError('an earlier output is shorter than its layout');
  for (
    let r = countLeading(starts.length, (i) => (starts[i] as number) <= start) - 1;
    r < starts.length && (starts[r] as number) < end;
    r++
  ) {
    const rangeStart = starts[r] as number;
    const from0 = Math.max(start, rangeStart);
    const to = Math.min(end, rangeStart + (splice.ranges[3 * r + 2] as number));
    appendRange(
      into,
      piece(splice.ranges[3 * r] as number),
      (splice.ranges[3 * r + 1] as number) + from0 - rangeStart,
      to - from0,
    );
  }
}

/** Appends a range, joined to the last one when it goes on where that one ends. */
export function appendRange(ranges: number[], piece: number, start: number, length: number): void {
  if (length <= 0) return;
  const last = ranges.length - 3;
  if (last >= 0 && ranges[last] === piece && (ranges[last + 1] as number) + (ranges[last + 2] as number) === start)
    ranges[last + 2] = (ranges[last + 2] as number) + length;
  else ranges.push(piece, start, length);
}

/** What rangesOf reads an earlier output as. */
export function rangeSource(output: OutputSource): Parameters<typeof rangesOf>[0] {
  if (output instanceof SplicedOutput) return { splice: output.splice, starts: output.starts };
  return output.splice === null
    ? { splice: null, size: output.size }
    : { splice: output.splice, starts: rangeStarts(output.splice) };
}

/** The SHA-256 (hex) of output `path` (openOutput): what a spliced artifact's result reports. */
export async function hashOutput(path: string): Promise<string> {
  const output = await openOutput(path);
  try {
    const hash = createHash('sha256');
    const buffer = takeBuffer();
    try {
      for (let at = 0; at < output.size;) {
        const n = await output.read(buffer, at);
        if (n === 0) throw new DamagedSpliceError(`${path} ended at ${at} of its ${output.size} bytes`);
        hash.update(buffer.subarray(0, n));
        at += n;
      }
    } finally {
      giveBack(buffer);
    }
    return hash.digest('hex');
  } finally {
    await output.close();
  }
}
