import type { ArtifactFormat } from '@reposcan/client';
import { ARTIFACT_FORMATS, partNumberText } from '@reposcan/contracts/vocabulary';

/**
 * `<repo>.<format>`, the name the API's Content-Disposition gives too, reduced to characters
 * that are safe in a file name on every OS (the repository name comes from the server).
 */
export function artifactFileName(repoName: string, format: ArtifactFormat): string {
  return `${safeStem(repoName)}.${format}`;
}

/** `<repo>.part-01.<format>`: part `part` of `parts` of an output cut by --max-tokens, named as the API names it. */
export function partFileName(repoName: string, format: ArtifactFormat, part: number, parts: number): string {
  return `${safeStem(repoName)}.part-${partNumberText(part, parts)}.${format}`;
}

/**
 * `<repo>.summary.json`: the summary record (totals, every file, skipped paths and why), which
 * the digests' footer points at ("listed in summary.json"); written beside them.
 */
export function summaryFileName(repoName: string): string {
  return `${safeStem(repoName)}.summary.json`;
}

function safeStem(repoName: string): string {
  const safe = repoName
    // eslint-disable-next-line no-control-regex -- control characters are what it removes
    .replace(/[\u0000-\u001f\u007f/\\:*?"<>|]+/g, '_')
    .replace(/^\.+/, '')
    .slice(0, 200);
  return safe || 'repository';
}

/** The formats to write: the ones asked for, or every one the scan produced, in output order. */
export function selectFormats(
  produced: readonly ArtifactFormat[],
  asked: readonly ArtifactFormat[] | null,
): ArtifactFormat[] {
  return ARTIFACT_FORMATS.filter((f) => produced.includes(f) && (asked === null || asked.includes(f)));
}
