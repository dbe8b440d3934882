// A change digest's three text formats: what changed between two commits, each changed file with
// its diff and its new text. Pure: the scan hands in the entries and a loader of each one's texts
// (already redacted and counted; a whole repository's change is not held in memory at once) and
// gets the pieces to write.
import type { TextFormat } from '@reposcan/contracts/vocabulary';
import { carriedPath } from '../path-bytes.js';
import { endsWithNewline } from '../text/utf8.js';
import type { AssetRecord, FileChange, ScanSummaryTotals, TextFileRecord, TokenEncodingName } from '../types.js';
import { changeCountsLine } from './change-counts.js';
import { displayPath } from './display-path.js';
import { formatSize } from './human-format.js';
import { languageHint } from './language-hint.js';
import { fenceFor, fenceForUtf8, inlineCode, tableCode } from './markdown-fence.js';
import type { RenderedChunk, RepositoryBlock } from './render-context.js';

/** The summary of a change digest: the two commits and how many paths changed which way. */
export interface ChangeDigestBlock {
  base_ref: string;
  base_commit: string;
  head_commit: string | null;
  counts: { added: number; modified: number; renamed: number; deleted: number; binary: number };
}

/** One changed path as the digest shows it. */
export interface DigestEntry {
  change: Pick<FileChange, 'status' | 'path' | 'oldPath' | 'similarity'>;
  /** A textual file's record (tokens: its diff's and its new text's); null for a binary file. */
  record: TextFileRecord | null;
  /** The binary file's record when it is in the scanned commit. */
  asset: AssetRecord | null;
}

/** A changed file's texts as the outputs hold them. */
export interface DigestTexts {
  /** The diff (redacted where secrets were found); null for a binary file. */
  diff: Uint8Array | null;
  /** The new text; null for a deleted or binary file. */
  content: Uint8Array | null;
}

export type LoadDigestTexts<E extends DigestEntry> = (entry: E) => Promise<DigestTexts>;

export interface DigestContext {
  repository: RepositoryBlock;
  encoding: TokenEncodingName;
  digest: ChangeDigestBlock;
  tree: string | null;
  lite: boolean;
  summary: ScanSummaryTotals;
  skippedCount: number;
}

const RULE = '='.repeat(64);

function countsLine(digest: ChangeDigestBlock): string {
  return changeCountsLine(digest.counts);
}

function digestLine(digest: ChangeDigestBlock): string {
  return `${displayPath(digest.base_ref)} (${digest.base_commit}) -> ${digest.head_commit ?? '?'}`;
}

/** A whole artifact of the digest, as pieces written one after the other; each entry's texts are loaded as it comes. */
export async function* renderChangeDigest<E extends DigestEntry>(
  format: TextFormat,
  ctx: DigestContext,
  entries: readonly E[],
  load: LoadDigestTexts<E>,
): AsyncIterable<RenderedChunk> {
  if (format === 'txt') yield* digestTxt(ctx, entries, load);
  else if (format === 'md') yield* digestMarkdown(ctx, entries, load);
  else yield* digestJson(ctx, entries, load);
}

async function* digestTxt<E extends DigestEntry>(
  ctx: DigestContext,
  entries: readonly E[],
  load: LoadDigestTexts<E>,
): AsyncIterable<RenderedChunk> {
  const head: string[] = [];
  if (!ctx.lite) {
    const repo = ctx.repository;
    const lines = [`Repository: ${displayPath(repo.name)}`, `Source: ${repo.source}`];
    if (repo.url) lines.push(`URL: ${repo.url}`);
    if (repo.branch) lines.push(`Branch: ${displayPath(repo.branch)}`);
    if (repo.commit) lines.push(`Commit: ${repo.commit}`);
    if (repo.subdir) lines.push(`Subdirectory: ${displayPath(repo.subdir)}`);
    lines.push(`Change digest: ${digestLine(ctx.digest)}`, `Changes: ${countsLine(ctx.digest)}`);
    head.push(lines.join('\n'));
  }
  if (ctx.tree !== null) head.push(`Changed files in the new tree:\n${ctx.tree}`);
  if (head.length > 0) yield `${head.join('\n\n')}\n\n`;
  for (const entry of entries) {
    const { change, record } = entry;
    if (record === null) continue;
    const { diff, content } = await load(entry);
    const header = [RULE, `FILE: ${displayPath(change.path)}`, `CHANGE: ${changeWords(change)}`];
    // A deleted file has no size in the new tree.
    const size = content === null ? '' : `SIZE: ${formatSize(record.size_bytes)} | `;
    if (!ctx.lite) header.push(`TYPE: ${record.subcategory} | ${size}TOKENS: ${record.tokens_estimate}`);
    header.push(RULE);
    yield `${header.join('\n')}\n`;
    if (diff !== null && diff.length > 0) {
      yield '--- DIFF ---\n';
      yield diff;
      if (!endsWithNewline(diff)) yield '\n';
    }
    if (content === null) yield '--- DELETED ---\n\n';
    else {
      yield '--- NEW CONTENT ---\n';
      yield content;
      yield endsWithNewline(content) || content.length === 0 ? '\n' : '\n\n';
    }
  }
  if (ctx.lite) return;
  const sections: string[] = [];
  const renamed = entries.filter((e) => e.change.status === 'renamed');
  if (renamed.length > 0)
    sections.push(
      txtSection(
        'RENAMED',
        renamed.map((e) => `${displayPath(e.change.oldPath ?? '')} -> ${displayPath(e.change.path)}${similarity(e)}`),
      ),
    );
  const deleted = entries.filter((e) => e.change.status === 'deleted');
  if (deleted.length > 0)
    sections.push(
      txtSection(
        'DELETED',
        deleted.map((e) => displayPath(e.change.path)),
      ),
    );
  const binary = entries.filter((e) => e.record === null);
  if (binary.length > 0)
    sections.push(
      txtSection(
        'BINARY FILES (changed; no diff or content)',
        binary.map((e) => `${e.change.status.padEnd(8)}  ${displayPath(e.change.path)}`),
      ),
    );
  sections.push(
    txtSection('SUMMARY', [
      `Change digest: ${digestLine(ctx.digest)}`,
      `Changes: ${countsLine(ctx.digest)}`,
      `Total size (new texts): ${ctx.summary.formatted.total_size}`,
      `Tokens (${ctx.encoding}): ${ctx.summary.formatted.estimated_tokens}`,
      ...(ctx.skippedCount > 0 ? [`Skipped paths: ${ctx.skippedCount} (listed in summary.json)`] : []),
    ]),
  );
  yield sections.join('\n');
}

function txtSection(title: string, lines: string[]): string {
  return `${RULE}\n${title}\n${RULE}\n${lines.join('\n')}\n`;
}

function changeWords(change: DigestEntry['change']): string {
  if (change.status === 'renamed') return `renamed from ${displayPath(change.oldPath ?? '')}`;
  return change.status;
}

function similarity(entry: DigestEntry): string {
  return entry.change.similarity === null ? '' : ` (${entry.change.similarity}% similar)`;
}

async function* digestMarkdown<E extends DigestEntry>(
  ctx: DigestContext,
  entries: readonly E[],
  load: LoadDigestTexts<E>,
): AsyncIterable<RenderedChunk> {
  const parts: string[] = [];
  if (!ctx.lite) {
    const repo = ctx.repository;
    const rows: Array<[string, string]> = [['Source', repo.source]];
    if (repo.url) rows.push(['URL', repo.url.replaceAll('|', '%7C')]);
    if (repo.branch) rows.push(['Branch', tableCode(repo.branch)]);
    if (repo.commit) rows.push(['Commit', tableCode(repo.commit)]);
    if (repo.subdir) rows.push(['Subdirectory', tableCode(repo.subdir)]);
    rows.push(['Base ref', tableCode(ctx.digest.base_ref)], ['Base commit', tableCode(ctx.digest.base_commit)]);
    rows.push(['Changes', countsLine(ctx.digest)]);
    parts.push(
      `# ${displayPath(repo.name)}: changes since ${inlineCode(ctx.digest.base_ref)}`,
      '## Repository',
      table(rows),
    );
  }
  if (ctx.tree !== null) {
    const fence = fenceFor(ctx.tree);
    parts.push('## Changed files in the new tree', `${fence}text\n${ctx.tree}\n${fence}`);
  }
  parts.push('## Changed files');
  yield `${parts.join('\n\n')}\n\n`;
  let shown = 0;
  for (const entry of entries) {
    const { change, record } = entry;
    if (record === null) continue;
    shown++;
    const { diff, content } = await load(entry);
    const lines = [`### ${inlineCode(displayPath(change.path))}`, ''];
    const meta = [
      `_${changeWords(change).replace(/^renamed from (.*)$/, (_, from: string) => `renamed from ${inlineCode(from)}`)}_`,
    ];
    if (!ctx.lite)
      meta.push(
        record.subcategory,
        ...(content === null ? [] : [formatSize(record.size_bytes)]),
        `${record.tokens_estimate} tokens`,
      );
    lines.push(meta.join(' · '), '');
    yield `${lines.join('\n')}\n`;
    if (diff !== null && diff.length > 0) {
      const fence = fenceForUtf8(diff);
      yield `#### Diff\n\n${fence}diff\n`;
      yield diff;
      yield `${endsWithNewline(diff) ? '' : '\n'}${fence}\n\n`;
    }
    if (content === null) yield '_Deleted._\n\n';
    else {
      const fence = fenceForUtf8(content);
      yield `#### New content\n\n${fence}${languageHint(carriedPath(change.path))}\n`;
      yield content;
      yield `${endsWithNewline(content) || content.length === 0 ? '' : '\n'}${fence}\n\n`;
    }
  }
  const tail: string[] = [];
  if (shown === 0) tail.push('_No changed textual files._\n');
  if (!ctx.lite) {
    const renamed = entries.filter((e) => e.change.status === 'renamed');
    if (renamed.length > 0)
      tail.push(
        `## Renamed\n\n| From | To | Similarity |\n|---|---|---|\n${renamed
          .map(
            (e) =>
              `| ${tableCode(displayPath(e.change.oldPath ?? ''))} | ${tableCode(displayPath(e.change.path))} | ${e.change.similarity ?? ''}% |`,
          )
          .join('\n')}\n`,
      );
    const deleted = entries.filter((e) => e.change.status === 'deleted');
    if (deleted.length > 0)
      tail.push(`## Deleted\n\n${deleted.map((e) => `- ${inlineCode(displayPath(e.change.path))}`).join('\n')}\n`);
    const binary = entries.filter((e) => e.record === null);
    if (binary.length > 0)
      tail.push(
        `## Binary files (changed; no diff or content)\n\n| Path | Change |\n|---|---|\n${binary
          .map((e) => `| ${tableCode(displayPath(e.change.path))} | ${e.change.status} |`)
          .join('\n')}\n`,
      );
    const rows: Array<[string, string]> = [
      ['Change digest', digestLine(ctx.digest).replaceAll('|', '%7C')],
      ['Changes', countsLine(ctx.digest)],
      ['Total size (new texts)', ctx.summary.formatted.total_size],
      [`Tokens (${ctx.encoding})`, ctx.summary.formatted.estimated_tokens],
    ];
    if (ctx.skippedCount > 0) rows.push(['Skipped paths', `${ctx.skippedCount} (listed in summary.json)`]);
    tail.push(`## Summary\n\n${table(rows)}\n`);
  }
  yield tail.join('\n');
}

function table(rows: Array<[string, string]>): string {
  return ['| Field | Value |', '|---|---|', ...rows.map(([k, v]) => `| ${k} | ${v} |`)].join('\n');
}

/**
 * One object, a changed file per line: its record, `status`, `old_path`, `diff` (null for a
 * binary file) and `content` (null for a deleted or binary one). Binary files are in `files` too,
 * with their change and no texts.
 */
async function* digestJson<E extends DigestEntry>(
  ctx: DigestContext,
  entries: readonly E[],
  load: LoadDigestTexts<E>,
): AsyncIterable<RenderedChunk> {
  const lines = ['{'];
  if (!ctx.lite)
    lines.push(
      `  "repository": ${JSON.stringify(ctx.repository)},`,
      `  "encoding": ${JSON.stringify(ctx.encoding)},`,
      `  "changes": ${JSON.stringify(ctx.digest)},`,
    );
  if (ctx.tree !== null) lines.push(`  "tree": ${JSON.stringify(ctx.tree)},`);
  lines.push('  "files": [');
  yield `${lines.join('\n')}\n`;
  for (const [index, entry] of entries.entries()) {
    const { change } = entry;
    const { diff, content } = await load(entry);
    const meta = ctx.lite ? { path: change.path } : (entry.record ?? entry.asset ?? { path: change.path });
    const object = JSON.stringify({
      ...meta,
      status: change.status,
      old_path: change.oldPath,
      binary: entry.record === null,
    });
    // The texts, last, are escaped from their bytes into the output: no string of a large file is made.
    yield `${index > 0 ? ',\n' : ''}    ${object.slice(0, -1)},"diff":`;
    yield diff === null ? 'null' : { jsonString: diff };
    yield ',"content":';
    yield content === null ? 'null' : { jsonString: content };
    yield '}';
  }
  const close = entries.length > 0 ? '\n  ]' : '  ]';
  if (ctx.lite) yield `${close}\n}\n`;
  else yield `${close},\n  "summary": ${JSON.stringify(ctx.summary)},\n  "skipped_count": ${ctx.skippedCount}\n}\n`;
}
