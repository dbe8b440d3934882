import type { TextFormat } from '@reposcan/contracts/vocabulary';
import type { AssetRecord, SummaryTotals, TextFileRecord, TokenEncodingName } from '../types.js';

export interface RepositoryBlock {
  name: string;
  source: 'remote' | 'local' | 'upload';
  url: string | null;
  branch: string | null;
  commit: string | null;
  subdir: string | null;
}

/**
 * What an artifact's head shows: known once the walk is over, so the head is written before the
 * first file block and every artifact is written once, front to back.
 */
export interface HeadContext {
  repository: RepositoryBlock;
  encoding: TokenEncodingName;
  /** The drawn tree, or null with `skip_tree`. */
  tree: string | null;
  lite: boolean;
}

/** What the tail shows on top: the totals, known only once every file is read and counted. */
export interface RenderContext extends HeadContext {
  summary: SummaryTotals;
  assets: AssetRecord[];
  skippedCount: number;
}

export type { TextFormat };

/** UTF-8 text written as a JSON string literal, quotes included: escaped straight into the output. */
export interface JsonStringChunk {
  jsonString: Uint8Array;
}

/** A piece of an artifact: text, UTF-8 bytes written as they are, or UTF-8 bytes written as a JSON string. */
export type RenderedChunk = string | Uint8Array | JsonStringChunk;

/** Which piece of a file a block holds, when a part budget cut the file (`content` is that piece). */
export interface FilePiece {
  part: number;
  parts: number;
}

/**
 * A format is three pure pieces, written in order as the scan goes: the head (repository and
 * tree) once the walk is over, one block per file as files are counted, the tail (summary
 * totals, non-textual files) at the end. No artifact is ever held in memory whole, nor copied.
 */
export interface FormatRenderer {
  format: TextFormat;
  head(ctx: HeadContext): string;
  /** What stands between two file blocks (JSON's comma), part of neither. */
  separator: string;
  /**
   * One file's block. `content` is the file's UTF-8 text; chunks are produced lazily and are
   * `content` itself (as it is or as a JSON string) or small strings, so a large file never
   * becomes a large string.
   */
  file(record: TextFileRecord, content: Uint8Array, lite: boolean, piece?: FilePiece): Iterable<RenderedChunk>;
  tail(ctx: RenderContext, fileCount: number): string;
}

/** How a file block says its text is not quite the repository's: null when nothing was replaced. */
export function replacementNote(record: TextFileRecord): string | null {
  const replaced = record.replacements ?? 0;
  if (replaced === 0) return null;
  return `${replaced} undecodable ${replaced === 1 ? 'character' : 'characters'} shown as U+FFFD`;
}
