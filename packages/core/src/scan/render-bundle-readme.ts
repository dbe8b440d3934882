import { BUNDLE_REPOSITORY_DIR } from '../artifacts/write-zip-bundle.js';
import { displayPath } from '../render/display-path.js';
import type { ScanReport } from './run-scan.js';

/** The short README.md inside the ZIP bundle: what each entry is. */
export function renderBundleReadme(report: ScanReport): string {
  const { repository: repo, summary } = report;
  const at = [repo.branch && `branch \`${displayPath(repo.branch)}\``, repo.commit && `commit \`${repo.commit}\``]
    .filter(Boolean)
    .join(', ');
  return [
    `# reposcan bundle: ${displayPath(repo.name)}`,
    '',
    `Scanned from a ${repo.source} source${repo.url ? ` (${repo.url})` : ''}${at ? ` at ${at}` : ''}.`,
    `${summary.total_files} files, ${summary.formatted.total_size}, ${summary.formatted.estimated_tokens} tokens (${report.encoding}).`,
    '',
    `The files at the top of this bundle are reposcan's; the repository's own files are under \`${BUNDLE_REPOSITORY_DIR}/\`, at their paths in the repository, so a \`README.md\` or \`manifest.json\` of the repository never takes the place of these.`,
    '',
    '| Entry | What it holds |',
    '|---|---|',
    '| `README.md` | this page |',
    ...(report.parts
      ? [
          `| \`output.part-NN.txt\` | every textual file as plain text, with the directory tree, in ${report.parts.find((o) => o.format === 'txt')?.parts.length} parts of at most ${report.options.max_tokens_per_part} tokens |`,
          '| `output.part-NN.md` | the same as Markdown, one fenced block per file |',
          '| `output.part-NN.json` | the same as JSON, one document per part |',
        ]
      : [
          '| `output.txt` | every textual file as plain text, with the directory tree |',
          '| `output.md` | the same as Markdown, one fenced block per file |',
          '| `output.json` | the same as JSON, one object per file |',
        ]),
    '| `summary.json` | the summary record: totals, per-file metadata, skipped paths and why |',
    '| `manifest.json` | size and sha256 of every other entry, to verify the bundle |',
    `| \`${BUNDLE_REPOSITORY_DIR}/\` | the repository's non-textual files (images, binaries …) as they were, at their paths in the repository (its textual files are in the outputs) |`,
    '',
  ].join('\n');
}
