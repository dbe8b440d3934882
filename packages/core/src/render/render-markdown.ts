import { displayPath } from './display-path.js';
import { formatSize, formatTokens } from './human-format.js';
import { carriedPath } from '../path-bytes.js';
import { languageHint } from './language-hint.js';
import { endsWithNewline } from '../text/utf8.js';
import { fenceFor, fenceForUtf8, inlineCode, tableCode } from './markdown-fence.js';
import { replacementNote } from './render-context.js';
import type { FilePiece, FormatRenderer, HeadContext, RenderContext } from './render-context.js';
import type { TextFileRecord } from '../types.js';

function table(rows: Array<[string, string]>): string {
  return ['| Field | Value |', '|---|---|', ...rows.map(([k, v]) => `| ${k} | ${v} |`)].join('\n');
}

function repositoryTable(ctx: HeadContext): string {
  const { repository: repo } = ctx;
  const rows: Array<[string, string]> = [['Source', repo.source]];
  if (repo.url) rows.push(['URL', repo.url.replaceAll('|', '%7C')]);
  if (repo.branch) rows.push(['Branch', tableCode(repo.branch)]);
  if (repo.commit) rows.push(['Commit', tableCode(repo.commit)]);
  if (repo.subdir) rows.push(['Subdirectory', tableCode(repo.subdir)]);
  return table(rows);
}

function summaryTable(ctx: RenderContext): string {
  const { summary } = ctx;
  const textual = summary.total_files - ctx.assets.length;
  const rows: Array<[string, string]> = [
    ['Files', `${summary.total_files} (${textual} textual, ${ctx.assets.length} non-textual)`],
    ['Total size', summary.formatted.total_size],
    [`Tokens (${ctx.encoding})`, summary.formatted.estimated_tokens],
  ];
  for (const [type, tokens] of Object.entries(summary.tokens_by_type))
    rows.push([`Tokens: ${type}`, formatTokens(tokens ?? 0)]);
  if (ctx.skippedCount > 0) rows.push(['Skipped paths', `${ctx.skippedCount} (listed in summary.json)`]);
  return table(rows);
}

/**
 * Markdown: the repository and its tree, headings per file, fences longer than any backtick run
 * inside, metadata in rich mode, then the non-textual files and the totals, which are known last.
 */
export const markdownRenderer: FormatRenderer = {
  format: 'md',
  head(ctx) {
    const parts: string[] = [];
    if (!ctx.lite) parts.push(`# ${displayPath(ctx.repository.name)}`, '## Repository', repositoryTable(ctx));
    if (ctx.tree !== null) {
      const fence = fenceFor(ctx.tree);
      parts.push('## Directory structure', `${fence}text\n${ctx.tree}\n${fence}`);
    }
    parts.push('## Files');
    return `${parts.join('\n\n')}\n\n`;
  },
  separator: '',
  *file(record: TextFileRecord, content: Uint8Array, lite: boolean, piece?: FilePiece) {
    const fence = fenceForUtf8(content);
    const lines = [`### ${inlineCode(displayPath(record.path))}`, ''];
    if (piece) lines.push(`_Part ${piece.part} of ${piece.parts} of this file._`, '');
    if (!lite) {
      const meta = [record.subcategory, formatSize(record.size_bytes), `${record.tokens_estimate} tokens`];
      if (record.encoding) meta.push(`decoded from ${record.encoding}`);
      const replaced = replacementNote(record);
      if (replaced) meta.push(replaced);
      // Pointy brackets: a link destination that may hold parentheses (encodeURIComponent keeps them).
      if (record.url) meta.push(`[source](<${record.url}>)`);
      lines.push(meta.join(' · '), '');
    }
    yield `${lines.join('\n')}\n${fence}${languageHint(carriedPath(record.path))}\n`;
    yield content;
    yield `${endsWithNewline(content) || content.length === 0 ? '' : '\n'}${fence}\n\n`;
  },
  tail(ctx, fileCount) {
    const parts: string[] = [];
    if (fileCount === 0) parts.push('_No textual files._\n');
    if (!ctx.lite && ctx.assets.length > 0) {
      const rows = ctx.assets.map(
        (a) => `| ${tableCode(displayPath(a.path))} | ${a.subcategory} | ${formatSize(a.size_bytes)} |`,
      );
      parts.push(`## Non-textual files\n\n| Path | Type | Size |\n|---|---|---|\n${rows.join('\n')}\n`);
    }
    if (!ctx.lite) parts.push(`## Summary\n\n${summaryTable(ctx)}\n`);
    return parts.join('\n');
  },
};
