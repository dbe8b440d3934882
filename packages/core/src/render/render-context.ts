import type { AssetRecord, SummaryTotals, TextFileRecord, TokenEncodingName } from '../types.js';

export interface RepositoryBlock {
  name: string;
  source: 'remote' | 'local' | 'upload';
  url: string | null;
  branch: string | null;
  commit: string | null;
  subdir: string | null;
}

/** Everything an artifact shows besides the file contents; known only once every file is read. */
export interface RenderContext {
  repository: RepositoryBlock;
  encoding: TokenEncodingName;
  summary: SummaryTotals;
  /** The drawn tree, or null with `skip_tree`. */
  tree: string | null;
  assets: AssetRecord[];
  skippedCount: number;
  lite: boolean;
}

export type TextFormat = 'txt' | 'md' | 'json';

/** A piece of an artifact: text, or UTF-8 bytes written as they are. */
export type RenderedChunk = string | Uint8Array;

/**
 * A format is three pure pieces. File blocks are produced while files stream through the
 * engine; head and tail need the totals and are rendered last, then the writer assembles
 * head + blocks + tail on disk, so no artifact is ever held in memory whole.
 */
export interface FormatRenderer {
  format: TextFormat;
  head(ctx: RenderContext): string;
  /**
   * One file's block. `content` is the file's UTF-8 text; chunks are produced lazily and are
   * either `content` itself or small strings, so a large file never becomes a large string.
   */
  file(record: TextFileRecord, content: Uint8Array, index: number, lite: boolean): Iterable<RenderedChunk>;
  tail(ctx: RenderContext, fileCount: number): string;
}
