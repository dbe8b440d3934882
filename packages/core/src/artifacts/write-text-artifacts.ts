import { Buffer } from 'node:buffer';
import { link, open, rm, writeFile } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ARTIFACT_FILE_NAMES } from './artifact-names.js';
import type { AppendedFileHash, HashAppendedFile } from '../io/appended-file-hash.js';
import { writeAll } from '../io/write-all.js';
import type { WrittenArtifact } from './artifact-names.js';
import type { FormatRenderer, HeadContext, RenderContext, TextFormat } from '../render/render-context.js';
import { ChunkBuffer } from './chunk-buffer.js';
import type { TextFileRecord } from '../types.js';
import {
  appendRange,
  DamagedSpliceError,
  pieceFileName,
  rangeSource,
  rangesOf,
  spliceFileName,
} from './spliced-artifact.js';
import type { OutputSource, Splice } from './spliced-artifact.js';

/**
 * An artifact is flushed to disk in the background every this many bytes, while the scan still
 * counts: the sync before publishing then waits for the last stretch only, not for 200 MB at once
 * (every 32 MB left 55-70 ms of syncing at the end of a 70 MB scan; every 8 MB, 20-25 ms).
 */
const SYNC_EVERY_BYTES = 8 << 20;

interface Artifact {
  renderer: FormatRenderer;
  file: string;
  handle: FileHandle;
  /** Made by `startHash` with the first write to the artifact itself: after the walk, when a scan knows its threads. */
  hash: AppendedFileHash | null;
  startHash: () => AppendedFileHash;
  bytes: number;
  /** Blocks are encoded into this one buffer and written when it fills. */
  out: ChunkBuffer;
  /** Blocks rendered before the head could be (the walk still running) wait here; null once the head is written. */
  early: { path: string; handle: FileHandle | null } | null;
  unsynced: number;
  /** The background sync in flight: resolves to its error, if any (the first failure stays). */
  syncing: Promise<Error | null> | null;
  /** Where the head ends and each file's block lies: what a later scan copies blocks by (OutputLayout). */
  layout: OutputLayout;
  /** A spliced artifact's making (spliced-artifact.ts): its own bytes go to piece 0. Null when written whole. */
  splice: SpliceMaking | null;
}

interface SpliceMaking {
  /** The output's file name (`output.<format>`). */
  file: string;
  ranges: number[];
  /** Piece names by number; 0 is this artifact's own piece, the others link earlier pieces. */
  pieces: string[];
  /** The piece number of each earlier file linked, by its path. */
  links: Map<string, number>;
  /** Where in piece 0 the bytes not yet in `ranges` begin. */
  mark: number;
}

/**
 * Where an artifact's pieces lie: the head's length, then, in file order, each file's block's
 * length and where in it the file's link starts (-1 without one); a separator stands between two
 * blocks and the tail follows the last.
 */
export interface OutputLayout {
  head: number;
  blocks: number[];
  links: number[];
}

/** Where a block comes from: a file rendered afresh, or block `index` of the earlier artifact, its link `from` now `to`. */
export type BlockSource = { record: TextFileRecord; content: Uint8Array } | { index: number; from: string; to: string };

/** An earlier artifact of the same format, open, and its layout. */
export interface EarlierArtifact {
  output: OutputSource;
  layout: OutputLayout;
}

/** The SHA-256 of a finished output (spliced-artifact.ts: hashOutput, off the caller's thread). */
export type HashOutput = (path: string) => Promise<string>;

/**
 * Writes every text artifact front to back, once: the head as soon as the walk is over (`begin`),
 * each file's block as it is counted (`addFile`), the tail with the totals at the end (`finish`),
 * hashing as it goes. Blocks that come before the head wait in a file of their own, copied in
 * after the head. Memory stays at one fixed buffer per format whatever the repository's size, and
 * no content passed to addFile is referenced once it returns.
 */
export class TextArtifactWriter {
  private fileCount = 0;

  private constructor(
    private readonly artifacts: Artifact[],
    private readonly lite: boolean,
    private readonly outDir: string,
    private readonly hashOutput: HashOutput | null,
  ) {}

  /**
   * `hashFile` hashes each artifact as it is written (hashOnThisThread, or a file thread's). With
   * `spliced`, every artifact is spliced (spliced-artifact.ts): its blocks come from earlier
   * artifacts by reference (addBlocks), and `spliced` hashes it once it is finished.
   */
  static async open(
    outDir: string,
    renderers: FormatRenderer[],
    lite: boolean,
    hashFile: HashAppendedFile,
    spliced?: HashOutput,
  ): Promise<TextArtifactWriter> {
    const artifacts: Artifact[] = [];
    try {
      for (const renderer of renderers) {
        const file = ARTIFACT_FILE_NAMES[renderer.format];
        const path = join(outDir, file);
        const splice: SpliceMaking | null = spliced
          ? { file, ranges: [], pieces: [pieceFileName(file, 0)], links: new Map(), mark: 0 }
          : null;
        const artifact: Artifact = {
          renderer,
          file,
          handle: await open(splice ? join(outDir, splice.pieces[0] as string) : path, 'wx'),
          hash: null,
          startHash: () => hashFile(path),
          splice,
          bytes: 0,
          out: new ChunkBuffer((data) => write(artifact, data)),
          early: { path: join(outDir, `.early.${renderer.format}`), handle: null },
          unsynced: 0,
          syncing: null,
          layout: { head: 0, blocks: [], links: [] },
        };
        artifacts.push(artifact);
      }
    } catch (error) {
      await Promise.allSettled(artifacts.map((a) => a.handle.close()));
      throw error;
    }
    return new TextArtifactWriter(artifacts, lite, outDir, spliced ?? null);
  }

  get begun(): boolean {
    return this.artifacts.every((a) => a.early === null);
  }

  /** Writes every head, then the blocks that were waiting for it. Call once, before `finish`. */
  async begin(ctx: HeadContext): Promise<void> {
    for (const artifact of this.artifacts) {
      const early = artifact.early;
      if (early === null) continue;
      await artifact.out.flush();
      artifact.early = null;
      const start = artifact.out.position;
      await artifact.out.put(artifact.renderer.head(ctx));
      artifact.layout.head = artifact.out.position - start;
      const waiting = early.handle;
      if (waiting === null) continue;
      try {
        // The write buffer carries the waiting blocks across.
        let position = 0;
        await artifact.out.putFrom(async (into) => {
          const { bytesRead } = await waiting.read(into, 0, into.length, position);
          position += bytesRead;
          return bytesRead;
        });
      } finally {
        // Gone whichever way the copy ends: abort() no longer knows of it.
        await waiting.close().catch(() => undefined);
        await rm(early.path, { force: true });
      }
    }
  }

  /** Append one file's block to every format; `content` is its UTF-8 text. */
  async addFile(record: TextFileRecord, content: Uint8Array): Promise<void> {
    const first = this.fileCount++ === 0;
    for (const artifact of this.artifacts) {
      if (!first) await artifact.out.put(artifact.renderer.separator);
      const { length, link } = await this.render(artifact, record, content);
      artifact.layout.blocks.push(length);
      artifact.layout.links.push(link);
    }
  }

  /**
   * Appends a block per entry of `blocks`, every artifact at once: a file rendered, or a block of
   * the same format's earlier artifact (`earlier`) copied, with its link replaced when it changed.
   * What lies between two links is copied in one stretch, separators included. Call after `begin`.
   */
  async addBlocks(
    blocks: readonly BlockSource[],
    earlier: Readonly<Record<TextFormat, EarlierArtifact>>,
  ): Promise<void> {
    if (!this.begun) throw new Error('TextArtifactWriter.begin() must come before addBlocks()');
    const first = this.fileCount;
    this.fileCount += blocks.length;
    await Promise.all(
      this.artifacts.map(async (artifact) => {
        const { layout } = artifact;
        const base = layout.blocks.length;
        const plan = planCopies(
          blocks,
          earlier[artifact.renderer.format].layout,
          artifact.renderer.separator,
          first > 0,
        );
        for (const length of plan.lengths) layout.blocks.push(length);
        for (const link of plan.links) layout.links.push(link);
        const { output } = earlier[artifact.renderer.format];
        const { out, splice } = artifact;
        const source = splice ? new SpliceSource(output, splice) : new CopySource(output);
        for (const step of plan.steps) {
          if (typeof step === 'string') {
            if (!out.takeString(step)) await out.put(step);
          } else if (typeof step === 'number') {
            const block = blocks[step] as Extract<BlockSource, { record: TextFileRecord }>;
            const { length, link } = await this.render(artifact, block.record, block.content);
            layout.blocks[base + step] = length;
            layout.links[base + step] = link;
          } else if (source instanceof SpliceSource) source.take(out.position, step[0], step[1]);
          else await source.copyTo(out, step[0], step[1]);
        }
      }),
    );
  }

  /** One file's block: its length and where in it its link starts. */
  private async render(
    artifact: Artifact,
    record: TextFileRecord,
    content: Uint8Array,
  ): Promise<{ length: number; link: number }> {
    const start = artifact.out.position;
    let link = -1;
    for (const chunk of artifact.renderer.file(record, content, this.lite)) {
      // The link is in the block's first lines, before the text: a path cannot hold it.
      if (link < 0 && record.url !== '' && typeof chunk === 'string') {
        const at = chunk.indexOf(record.url);
        if (at >= 0) link = artifact.out.position - start + Buffer.byteLength(chunk.slice(0, at));
      }
      await artifact.out.put(chunk);
    }
    return { length: artifact.out.position - start, link };
  }

  /** Each artifact's layout, once finished. */
  layouts(): Record<TextFormat, OutputLayout> {
    return Object.fromEntries(this.artifacts.map((a) => [a.renderer.format, a.layout])) as Record<
      TextFormat,
      OutputLayout
    >;
  }

  /** Writes every tail and syncs every artifact to disk; `ctx` is the one given to `begin` plus the totals. */
  async finish(ctx: RenderContext): Promise<WrittenArtifact[]> {
    if (!this.begun) throw new Error('TextArtifactWriter.begin() must come before finish()');
    for (const artifact of this.artifacts) {
      await artifact.out.put(artifact.renderer.tail(ctx, this.fileCount));
      await artifact.out.flush();
      if (artifact.splice) SpliceSource.ownBytes(artifact.splice, artifact.out.position);
    }
    const settled = await Promise.allSettled(
      this.artifacts.map(async (artifact): Promise<WrittenArtifact> => {
        const failed = await artifact.syncing;
        if (failed) throw failed;
        await artifact.handle.datasync();
        await artifact.handle.close();
        const { format } = artifact.renderer;
        if (artifact.splice)
          return { format, file: artifact.file, ...(await this.finishSplice(artifact.file, artifact.splice)) };
        return {
          format,
          file: artifact.file,
          bytes: artifact.bytes,
          sha256: await (artifact.hash ??= artifact.startHash()).digest(),
        };
      }),
    );
    // All settle before a failure is reported: the caller's clean-up must not race a late sync.
    const rejected = settled.find((s) => s.status === 'rejected');
    if (rejected) throw rejected.reason;
    return settled.map((s) => (s as PromiseFulfilledResult<WrittenArtifact>).value);
  }

  /** Links the earlier pieces a spliced artifact refers to and describes it (synced): its length and SHA-256. */
  private async finishSplice(file: string, making: SpliceMaking): Promise<{ bytes: number; sha256: string }> {
    for (const [earlier, n] of making.links)
      await link(earlier, join(this.outDir, making.pieces[n] as string)).catch((error: unknown) => {
        // The earlier scan deleted meanwhile: this scan is made as usual.
        throw new EarlierArtifactError('an earlier artifact is gone', { cause: error });
      });
    const splice: Splice = { format: 1, bytes: 0, pieces: making.pieces, ranges: making.ranges };
    for (let i = 2; i < splice.ranges.length; i += 3) splice.bytes += splice.ranges[i] as number;
    const path = join(this.outDir, spliceFileName(file));
    const handle = await open(path, 'wx');
    try {
      await writeFile(handle, JSON.stringify(splice));
      await handle.datasync();
    } finally {
      await handle.close();
    }
    // Read back through every piece: an earlier one damaged meanwhile shows here.
    const sha256 = await (this.hashOutput as HashOutput)(join(this.outDir, file)).catch((error: unknown) => {
      throw new EarlierArtifactError('a spliced artifact could not be read back', { cause: error });
    });
    return { bytes: splice.bytes, sha256 };
  }

  /** Closes everything after a failure; the caller removes the artifacts. */
  async abort(): Promise<void> {
    await Promise.allSettled(
      this.artifacts.flatMap((a) => [...(a.hash ? [a.hash.drop()] : []), ...(a.syncing ? [a.syncing] : [])]),
    );
    await Promise.allSettled(
      this.artifacts.flatMap((a) => [a.handle.close(), ...(a.early?.handle ? [a.early.handle.close()] : [])]),
    );
    await Promise.allSettled(this.artifacts.flatMap((a) => (a.early ? [rm(a.early.path, { force: true })] : [])));
  }
}

/**
 * How an artifact's next blocks are made from an earlier one: stretches of it ([start, end)),
 * texts put as they are, and indexes of blocks to render; with each block's length and link
 * (a rendered one's are filled in as it is written).
 */
function planCopies(
  blocks: readonly BlockSource[],
  earlier: OutputLayout,
  separator: string,
  afterAnother: boolean,
): { steps: Array<[number, number] | string | number>; lengths: number[]; links: number[] } {
  const gap = Buffer.byteLength(separator);
  const starts: number[] = [];
  for (let i = 0, position = earlier.head; i < earlier.blocks.length; i++) {
    starts.push(position);
    position += (earlier.blocks[i] as number) + gap;
  }
  const steps: Array<[number, number] | string | number> = [];
  const lengths: number[] = [];
  const links: number[] = [];
  const copy = (start: number, end: number): void => {
    const last = steps.at(-1);
    if (Array.isArray(last) && last[1] === start) last[1] = end;
    else if (end > start) steps.push([start, end]);
  };
  let previous = -2;
  for (const [i, block] of blocks.entries()) {
    const index = 'index' in block ? block.index : -1;
    if (i > 0 || afterAnother) {
      // The earlier separator joins two blocks that were already neighbours.
      if (index >= 0 && index === previous + 1) copy((starts[index] as number) - gap, starts[index] as number);
      else steps.push(separator);
    }
    previous = index;
    if (!('index' in block)) {
      steps.push(i);
      lengths.push(0);
      links.push(-1);
      continue;
    }
    const start = starts[index] as number;
    const length = earlier.blocks[index] as number;
    const link = earlier.links[index] as number;
    links.push(link);
    if (link < 0 || block.from === block.to) {
      copy(start, start + length);
      lengths.push(length);
      continue;
    }
    const fromBytes = Buffer.byteLength(block.from);
    copy(start, start + link);
    steps.push(block.to);
    copy(start + link + fromBytes, start + length);
    lengths.push(length - fromBytes + Buffer.byteLength(block.to));
  }
  return { steps, lengths, links };
}

/** An earlier artifact could not be read as its layout says (shorter, or a read failed): nothing of it is to be trusted. */
export class EarlierArtifactError extends Error {
  override readonly name = 'EarlierArtifactError';
}

/** An earlier artifact read in order a window at a time, its stretches copied into a write buffer. */
class CopySource {
  private readonly window = Buffer.allocUnsafe(1 << 20);
  private windowStart = 0;
  private windowLength = 0;

  constructor(private readonly from: OutputSource) {}

  async copyTo(out: ChunkBuffer, start: number, end: number): Promise<void> {
    for (let at = start; at < end;) {
      if (at < this.windowStart || at >= this.windowStart + this.windowLength) {
        const bytesRead = await this.from.read(this.window, at).catch((error: unknown) => {
          throw new EarlierArtifactError('an earlier artifact could not be read', { cause: error });
        });
        if (bytesRead === 0) throw new EarlierArtifactError('an earlier artifact is shorter than its layout');
        this.windowStart = at;
        this.windowLength = bytesRead;
      }
      const offset = at - this.windowStart;
      const taken = out.take(this.window, offset, offset + Math.min(end - at, this.windowLength - offset));
      if (taken === 0) await out.flush();
      at += taken;
    }
  }
}

/**
 * An earlier artifact's stretches taken into a spliced artifact by reference: the ranges that hold
 * them, after the artifact's own bytes put since the last stretch.
 */
class SpliceSource {
  private readonly from: ReturnType<typeof rangeSource>;
  private readonly dir: string;
  /** The new number of each earlier piece taken so far. */
  private readonly numbers: number[] = [];
  private readonly pieceNumber = (n: number): number => (this.numbers[n] ??= this.link(n));

  constructor(
    private readonly output: OutputSource,
    private readonly making: SpliceMaking,
  ) {
    this.from = rangeSource(output);
    this.dir = dirname(output.path);
  }

  /** Ends the run of the artifact's own bytes at `position` (of piece 0) with a range. */
  static ownBytes(making: SpliceMaking, position: number): void {
    appendRange(making.ranges, 0, making.mark, position - making.mark);
    making.mark = position;
  }

  /** Takes bytes [start, end) of the earlier artifact, after the artifact's own bytes up to `position`. */
  take(position: number, start: number, end: number): void {
    const { making } = this;
    SpliceSource.ownBytes(making, position);
    try {
      rangesOf(this.from, start, end, this.pieceNumber, making.ranges);
    } catch (error) {
      if (error instanceof DamagedSpliceError) throw new EarlierArtifactError(error.message, { cause: error });
      throw error;
    }
  }

  /** A number in the new artifact for earlier piece `n`, which is linked into its folder when it is finished. */
  private link(n: number): number {
    const { making, output } = this;
    const path = output.splice === null ? output.path : join(this.dir, output.splice.pieces[n] as string);
    const number = making.pieces.length;
    making.pieces.push(pieceFileName(making.file, number));
    making.links.set(path, number);
    return number;
  }
}

/** Appends `data` to the artifact, or to its waiting blocks before the head is written. */
async function write(artifact: Artifact, data: Uint8Array): Promise<void> {
  const early = artifact.early;
  if (early !== null) {
    early.handle ??= await open(early.path, 'wx+');
    return writeAll(early.handle, data);
  }
  artifact.hash ??= artifact.startHash();
  await writeAll(artifact.handle, data);
  artifact.bytes += data.byteLength;
  // Written first: a file thread's hash reads these bytes back.
  artifact.hash.appended(data, artifact.bytes);
  artifact.unsynced += data.byteLength;
  if (artifact.unsynced >= SYNC_EVERY_BYTES && artifact.syncing === null) {
    artifact.unsynced = 0;
    artifact.syncing = artifact.handle.datasync().then(
      () => {
        artifact.syncing = null;
        return null;
      },
      (error: unknown) => (error instanceof Error ? error : new Error(String(error))),
    );
  }
}
