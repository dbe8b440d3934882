import { Buffer } from 'node:buffer';
import type { SummaryRecord } from '@reposcan/contracts';
import { summaryFromEarlier } from './build-records.js';
import type { SummaryForResult } from './build-records.js';

// A scan served from the commit cache writes a summary of its own: the earlier one's under this
// scan's id, URLs and times. For a repository of many files nearly all of it is the file list,
// and parsing it and writing it out again was most of what a cached answer cost; so the list is
// carried over byte for byte and only the rest is parsed and written.

const FILES_OPEN = Buffer.from(',"files":[');
const FILES_CLOSE = Buffer.from('],"assets":');
const EMPTY_FILES = ',"files":[]';

/** The summary of scan `scanId` served from `fromId`'s, whose summary.json holds `earlier`: the record (the file list by its length) and the file's bytes. */
export function summaryFromEarlierFile(
  earlier: Buffer,
  fromId: string,
  scanId: string,
  createdAt: string,
  completedAt: string,
): { summary: SummaryForResult; bytes: Buffer } {
  const carried = carryFileList(earlier, (skeleton) =>
    summaryFromEarlier(skeleton, fromId, scanId, createdAt, completedAt),
  );
  if (carried !== null) return carried;
  const summary = summaryFromEarlier(
    JSON.parse(earlier.toString('utf8')) as SummaryRecord,
    fromId,
    scanId,
    createdAt,
    completedAt,
  );
  return { summary, bytes: Buffer.from(`${JSON.stringify(summary)}\n`) };
}

/**
 * `change` applied to the summary in `earlier` (`JSON.stringify` of a SummaryRecord and a newline)
 * with its file list left out, and the list put back as it was: the same bytes as writing the
 * changed record out in full. null when the list is not found as buildSummaryRecord lays it out.
 *
 * The markers can only be the keys themselves: an unescaped `"` never occurs inside a JSON
 * string, nothing before the list (repository, options, summary) has a `files` key, and nothing
 * after its start but the record itself has an `assets` key.
 */
function carryFileList(
  earlier: Buffer,
  change: (skeleton: SummaryRecord) => SummaryRecord,
): { summary: SummaryForResult; bytes: Buffer } | null {
  const open = earlier.indexOf(FILES_OPEN);
  const close = earlier.lastIndexOf(FILES_CLOSE);
  if (open < 0 || close < open + FILES_OPEN.length) return null;
  let skeleton: SummaryRecord;
  try {
    skeleton = JSON.parse(
      `${earlier.toString('utf8', 0, open)}${EMPTY_FILES},${earlier.toString('utf8', close + 2)}`,
    ) as SummaryRecord;
  } catch {
    return null;
  }
  const summary = change(skeleton);
  const text = `${JSON.stringify(summary)}\n`;
  const at = text.indexOf(EMPTY_FILES);
  if (at < 0) return null;
  return {
    // Every file is in the list or among the assets (the summary's totals).
    summary: { ...summary, files: { length: summary.summary.total_files - summary.assets.length } },
    bytes: Buffer.concat([
      Buffer.from(text.slice(0, at + EMPTY_FILES.length - 1)),
      earlier.subarray(open + FILES_OPEN.length, close),
      Buffer.from(text.slice(at + EMPTY_FILES.length - 1)),
    ]),
  };
}
