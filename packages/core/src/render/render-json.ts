import type { FormatRenderer } from './render-context.js';
import type { TextFileRecord } from '../types.js';

/**
 * JSON: one object, top-level keys on their own lines and one file object per line, so the
 * artifact streams file by file and stays greppable. Contents are exact JS strings.
 */
export const jsonRenderer: FormatRenderer = {
  format: 'json',
  head(ctx) {
    const lines = ['{'];
    if (!ctx.lite) {
      lines.push(
        `  "repository": ${JSON.stringify(ctx.repository)},`,
        `  "encoding": ${JSON.stringify(ctx.encoding)},`,
        `  "summary": ${JSON.stringify(ctx.summary)},`,
      );
    }
    if (ctx.tree !== null) lines.push(`  "tree": ${JSON.stringify(ctx.tree)},`);
    lines.push('  "files": [');
    return `${lines.join('\n')}\n`;
  },
  file(record: TextFileRecord, text: string, index: number, lite: boolean) {
    const entry = lite ? { path: record.path, content: text } : { ...record, content: text };
    return `${index > 0 ? ',\n' : ''}    ${JSON.stringify(entry)}`;
  },
  tail(ctx, fileCount) {
    const close = fileCount > 0 ? '\n  ]' : '  ]';
    if (ctx.lite) return `${close}\n}\n`;
    return `${close},\n  "assets": ${JSON.stringify(ctx.assets)},\n  "skipped_count": ${ctx.skippedCount}\n}\n`;
  },
};
