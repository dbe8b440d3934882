import { endsWithNewline } from '../text/utf8.js';
import { displayPath } from './display-path.js';
import { formatSize, formatTokens } from './human-format.js';
import { replacementNote } from './render-context.js';
import type { FilePiece, FormatRenderer, HeadContext, RenderContext } from './render-context.js';
import type { TextFileRecord } from '../types.js';

const RULE = '='.repeat(64);

function breakdown(entries: Partial<Record<string, number>>, format: (n: number) => string): string {
  return Object.entries(entries)
    .map(([name, n]) => `${name} ${format(n ?? 0)}`)
    .join(', ');
}

function repositoryLines(ctx: HeadContext): string[] {
  const { repository: repo } = ctx;
  const lines = [`Repository: ${displayPath(repo.name)}`, `Source: ${repo.source}`];
  if (repo.url) lines.push(`URL: ${repo.url}`);
  if (repo.branch) lines.push(`Branch: ${displayPath(repo.branch)}`);
  if (repo.commit) lines.push(`Commit: ${repo.commit}`);
  if (repo.subdir) lines.push(`Subdirectory: ${displayPath(repo.subdir)}`);
  return lines;
}

function summaryLines(ctx: RenderContext): string[] {
  const { summary } = ctx;
  const textual = summary.total_files - ctx.assets.length;
  const lines = [
    `Files: ${summary.total_files} (${textual} textual, ${ctx.assets.length} non-textual)`,
    `Total size: ${summary.formatted.total_size}`,
    `Tokens (${ctx.encoding}): ${summary.formatted.estimated_tokens}`,
  ];
  if (textual > 0) lines.push(`Tokens by type: ${breakdown(summary.tokens_by_type, formatTokens)}`);
  if (ctx.skippedCount > 0) lines.push(`Skipped paths: ${ctx.skippedCount} (listed in summary.json)`);
  return lines;
}

function section(title: string, lines: string[]): string {
  return `${RULE}\n${title}\n${RULE}\n${lines.join('\n')}\n`;
}

/**
 * Plain text: the repository and its tree, every file between rules, then the non-textual files
 * and the totals, which are known last; the layout LLM users know from gitingest.
 */
export const txtRenderer: FormatRenderer = {
  format: 'txt',
  head(ctx) {
    const parts: string[] = [];
    if (!ctx.lite) parts.push(repositoryLines(ctx).join('\n'));
    if (ctx.tree !== null) parts.push(`Directory structure:\n${ctx.tree}`);
    return parts.length > 0 ? `${parts.join('\n\n')}\n\n` : '';
  },
  separator: '',
  *file(record: TextFileRecord, content: Uint8Array, lite: boolean, piece?: FilePiece) {
    const header = [RULE, `FILE: ${displayPath(record.path)}`];
    if (piece) header.push(`PART: ${piece.part} of ${piece.parts} of this file`);
    if (!lite) {
      header.push(
        `TYPE: ${record.subcategory} | SIZE: ${formatSize(record.size_bytes)} | TOKENS: ${record.tokens_estimate}`,
      );
      const replaced = replacementNote(record);
      if (record.encoding)
        header.push(`ENCODING: ${record.encoding} (decoded to UTF-8${replaced ? `; ${replaced}` : ''})`);
      if (record.url) header.push(`URL: ${record.url}`);
    }
    header.push(RULE);
    yield `${header.join('\n')}\n`;
    yield content;
    yield endsWithNewline(content) || content.length === 0 ? '\n' : '\n\n';
  },
  tail(ctx) {
    if (ctx.lite) return '';
    const parts: string[] = [];
    if (ctx.assets.length > 0) {
      const rows = ctx.assets.map(
        (a) => `${a.subcategory.padEnd(6)}  ${formatSize(a.size_bytes).padStart(10)}  ${displayPath(a.path)}`,
      );
      parts.push(section('NON-TEXTUAL FILES (not included as text)', rows));
    }
    parts.push(section('SUMMARY', summaryLines(ctx)));
    return parts.join('\n');
  },
};
