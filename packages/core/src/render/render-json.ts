import type { FormatRenderer } from './render-context.js';
import type { TextFileRecord } from '../types.js';

/**
 * JSON: one object, top-level keys on their own lines and one file object per line, so the
 * artifact streams file by file and stays greppable. Contents are exact JS strings. The totals
 * (`summary`, `assets`, `skipped_count`) come after `files`: they are known last.
 */
export const jsonRenderer: FormatRenderer = {
  format: 'json',
  head(ctx) {
    const lines = ['{'];
    if (!ctx.lite)
      lines.push(
        `  "repository": ${JSON.stringify(ctx.repository)},`,
        `  "encoding": ${JSON.stringify(ctx.encoding)},`,
      );
    if (ctx.tree !== null) lines.push(`  "tree": ${JSON.stringify(ctx.tree)},`);
    lines.push('  "files": [');
    return `${lines.join('\n')}\n`;
  },
  separator: ',\n',
  *file(record: TextFileRecord, content: Uint8Array, lite: boolean) {
    // The object as JSON.stringify({ ...meta, content }) writes it, with the content streamed.
    const meta = JSON.stringify(lite ? { path: record.path } : record);
    yield `    ${meta.slice(0, -1)},"content":`;
    yield { jsonString: content };
    yield '}';
  },
  tail(ctx, fileCount) {
    const close = fileCount > 0 ? '\n  ]' : '  ]';
    if (ctx.lite) return `${close}\n}\n`;
    return `${close},\n  "summary": ${JSON.stringify(ctx.summary)},\n  "assets": ${JSON.stringify(ctx.assets)},\n  "skipped_count": ${ctx.skippedCount}\n}\n`;
  },
};
