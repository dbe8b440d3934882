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

/**
 * The summary of scan `scanId` served from `fromId`'s, whose summary.json holds `earlier`
 * (`JSON.stringify` of a SummaryRecord and a newline): the record (the file list by its length)
 * and the file's bytes, the same bytes as writing that record out in full.
 */
export function summaryFromEarlierFile(
  earlier: Buffer,
  fromId: string,
  scanId: string,
  createdAt: string,
  completedAt: string,
): { summary: SummaryForResult; bytes: Buffer } {
  const ours = (record: SummaryRecord): SummaryRecord =>
    summaryFromEarlier(record, fromId, scanId, createdAt, completedAt);
  // The markers can only be the keys themselves: an unescaped `"` never occurs inside a JSON
  // string, nothing before the list (repository, options, summary) has a `files` key, and nothing
  // after its start but the record itself has an `assets` key.
  const open = earlier.indexOf(FILES_OPEN);
  const close = earlier.lastIndexOf(FILES_CLOSE);
  const skeleton =
    open < 0 || close < open + FILES_OPEN.length
      ? null
      : parseOrNull(`${earlier.toString('utf8', 0, open)}${EMPTY_FILES},${earlier.toString('utf8', close + 2)}`);
  if (skeleton === null) {
    // Not laid out as buildSummaryRecord writes it: parsed and written out whole.
    const summary = ours(JSON.parse(earlier.toString('utf8')) as SummaryRecord);
    return { summary, bytes: Buffer.from(`${JSON.stringify(summary)}\n`) };
  }
  const summary = ours(skeleton);
  const text = `${JSON.stringify(summary)}\n`;
  // The list goes back inside the brackets of the empty one, the first `files` key as above.
  const inside = text.indexOf(EMPTY_FILES) + EMPTY_FILES.length - 1;
  return {
    // Every file is in the list or among the assets (the summary's totals).
    summary: { ...summary, files: { length: summary.summary.total_files - summary.assets.length } },
    bytes: Buffer.concat([
      Buffer.from(text.slice(0, inside)),
      earlier.subarray(open + FILES_OPEN.length, close),
      Buffer.from(text.slice(inside)),
    ]),
  };
}

function parseOrNull(text: string): SummaryRecord | null {
  try {
    return JSON.parse(text) as SummaryRecord;
  } catch {
    return null;
  }
}
