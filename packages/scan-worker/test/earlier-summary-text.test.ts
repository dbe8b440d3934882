import { Buffer } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { DEFAULT_WIRE_SCAN_OPTIONS } from '@reposcan/contracts';
import type { SummaryRecord } from '@reposcan/contracts';
import { resultFromSummary, summaryFromEarlier } from '../src/build-records.js';
import { summaryFromEarlierFile } from '../src/earlier-summary-text.js';

const FROM = '0b7c1a6e-3f52-4d8e-9a41-5c2d7e8f9a10';
const SCAN = '6d2f8c31-9e4b-4a7d-8c15-0f3e2b1a9d87';
const CREATED = '2026-11-28T00:00:00.000Z';
const COMPLETED = '2026-11-28T00:00:01.000Z';

// Strings that hold the markers the file list is found by, as a path or a pattern may.
const TRICKY = ['a,"files":[b', 'c],"assets":d', '],"assets":[],"files":[', 'q\\"],"assets":'];

function file(path: string): SummaryRecord['files'][number] {
  return {
    path,
    subcategory: 'code',
    size_bytes: path.length,
    tokens: 3,
    tokens_estimate: 3,
    url: `https://git.example/o/r/blob/main/${encodeURIComponent(path)}`,
  };
}

function earlier(overrides: Partial<SummaryRecord> = {}): SummaryRecord {
  const files = overrides.files ?? [file('src/a.ts'), ...TRICKY.map(file), file('é/中.md')];
  const assets = overrides.assets ?? [{ path: 'img/],"assets":.png', subcategory: 'image', size_bytes: 9, url: 'x' }];
  return {
    scan_id: FROM,
    state: 'completed',
    repository: {
      name: 'r',
      source: 'remote',
      url: 'https://git.example/o/r',
      branch: 'main',
      commit: 'c'.repeat(40),
      subdir: null,
    },
    options: { ...DEFAULT_WIRE_SCAN_OPTIONS, include_patterns: TRICKY },
    encoding: 'o200k_base',
    summary: {
      total_files: files.length + assets.length,
      total_size: 100,
      tokens: 3 * files.length,
      estimated_tokens: 3 * files.length,
      file_type_breakdown: { code: files.length },
      tokens_by_type: { code: 3 * files.length },
      files_with_replacements: 0,
      formatted: { total_size: '100 B', tokens: '15', estimated_tokens: '15' },
    },
    files,
    assets,
    skipped: [{ path: 'node_modules/', reason: 'excluded_dir' }],
    artifacts: {
      txt: { url: `/v1/download/${FROM}?format=txt`, bytes: 10, sha256: 'a'.repeat(64) },
      md: {
        url: `/v1/download/${FROM}?format=md`,
        bytes: 10,
        sha256: 'b'.repeat(64),
        parts: [
          { part: 1, url: `/v1/download/${FROM}?format=md&part=1`, bytes: 10, sha256: 'c'.repeat(64), tokens: 4 },
        ],
      },
    },
    timings: { walk_ms: 1, total_ms: 2 },
    created_at: '2026-11-27T00:00:00.000Z',
    completed_at: '2026-11-27T00:00:05.000Z',
    ...overrides,
  };
}

/** What the commit cache wrote before: the earlier summary parsed and written out whole. */
function parsedAndWritten(record: SummaryRecord): string {
  return `${JSON.stringify(summaryFromEarlier(record, FROM, SCAN, CREATED, COMPLETED))}\n`;
}

describe('summaryFromEarlierFile', () => {
  const cases: Array<[string, SummaryRecord]> = [
    ['files, paths and patterns holding the markers', earlier()],
    ['no textual file, no asset', earlier({ files: [], assets: [] })],
    [
      'an earlier summary served from the cache itself',
      earlier({ cached_from: '11111111-2222-4333-8444-555555555555' }),
    ],
    [
      'a change digest, whose own list of files comes after the assets',
      earlier({
        changes: {
          base_ref: 'main~1',
          base_commit: 'b'.repeat(40),
          head_commit: 'c'.repeat(40),
          counts: { added: 0, modified: 1, renamed: 0, deleted: 0, binary: 0 },
          files: [
            {
              path: 'x],"assets":',
              status: 'modified',
              old_path: null,
              similarity: null,
              binary: false,
              diff_tokens: 5,
            },
          ],
        },
      }),
    ],
  ];

  it.each(cases)('writes the bytes the whole record would be written as: %s', (_, record) => {
    const { summary, bytes } = summaryFromEarlierFile(
      Buffer.from(`${JSON.stringify(record)}\n`),
      FROM,
      SCAN,
      CREATED,
      COMPLETED,
    );
    const expected = parsedAndWritten(record);
    expect(bytes.toString('utf8')).toBe(expected);
    expect(resultFromSummary(summary, 'x')).toEqual(resultFromSummary(JSON.parse(expected) as SummaryRecord, 'x'));
  });

  it('carries the file list over as it is written, without parsing it', () => {
    // The same list with a character written as an escape, which JSON.stringify never writes.
    const text = `${JSON.stringify(earlier())}\n`.replace('é/中.md', '\\u00e9/中.md');
    const { bytes } = summaryFromEarlierFile(Buffer.from(text), FROM, SCAN, CREATED, COMPLETED);
    expect(bytes.toString('utf8')).toContain('"path":"\\u00e9/中.md"');
    expect(bytes.toString('utf8').replace('\\u00e9', 'é')).toBe(parsedAndWritten(earlier()));
  });

  it('parses the file whole when its file list is not laid out as expected', () => {
    const record = earlier();
    // The same record with its keys in another order: the markers are not where they should be.
    const { files, ...rest } = record;
    const reordered = Buffer.from(`${JSON.stringify({ ...rest, files })}\n`);
    const { summary, bytes } = summaryFromEarlierFile(reordered, FROM, SCAN, CREATED, COMPLETED);
    expect(JSON.parse(bytes.toString('utf8'))).toEqual(JSON.parse(parsedAndWritten(record)));
    expect(summary.files.length).toBe(record.files.length);
  });
});
