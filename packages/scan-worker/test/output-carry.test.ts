import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_WIRE_SCAN_OPTIONS } from '@reposcan/contracts';
import type { ScanReport } from '@reposcan/core';
import type { PreparedSource } from '@reposcan/sources';
import { CarriedScans } from '@reposcan/storage';
import type { CommitCacheMaterial } from '@reposcan/storage';
import { createdScan, tempStore } from '../../../packages/storage/test/temp-store.js';
import type { TempStore } from '../../../packages/storage/test/temp-store.js';
import { OutputCarry } from '../src/output-carry.js';

const material = (commit: string): CommitCacheMaterial => ({
  identity: {
    url: 'https://git.example/o/r',
    hostFamily: 'github',
    repoName: 'r',
    branch: 'main',
    commit,
    subdir: null,
    baseCommit: null,
  },
  options: { ...DEFAULT_WIRE_SCAN_OPTIONS },
  encoding: 'o200k_base',
  settings: { version: '0.1.0' },
});

/** A clone's listing as prepareSource gives it: regular files by blob id, links and submodules skipped. */
function prepared(
  blobs: Record<string, string>,
  other: Record<string, 'symlink' | 'submodule'> = {},
  quoted: string[] = [],
): PreparedSource {
  const tracked = [...Object.keys(blobs), ...Object.keys(other), ...quoted].sort();
  return {
    root: '/nowhere',
    repoName: 'r',
    source: { type: 'remote', url: null, hostFamily: null, ref: null, branch: 'main', commit: null, subdir: null },
    blobs: new Map(Object.entries(blobs)),
    sourceSkips: new Map(Object.entries(other)),
    git: { tracked, infoExclude: null },
  } as unknown as PreparedSource;
}

const report = {
  tree: 'r\n',
  files: [],
  assets: [],
  skipped: [],
  layout: {
    txt: { head: 1, blocks: [], links: [] },
    md: { head: 1, blocks: [], links: [] },
    json: { head: 1, blocks: [], links: [] },
  },
} as unknown as ScanReport;

describe('OutputCarry', () => {
  let t: TempStore;
  let carry: OutputCarry;
  let earlierId: string;
  beforeEach(async () => {
    t = await tempStore();
    carry = new OutputCarry(new CarriedScans(t.store), t.store, pino({ level: 'silent' }));
    earlierId = await createdScan(t.store);
    await t.store.updateState(earlierId, (s) => ({ ...s, state: 'completed' }));
    const first = prepared({ 'a.ts': '1'.repeat(40), 'b.ts': '2'.repeat(40) }, { link: 'symlink' });
    await carry.record(earlierId, material('a'.repeat(40)), first, report);
  });
  afterEach(() => t.cleanup());

  it('names the files whose blob changed, and the earlier outputs', async () => {
    const next = prepared({ 'a.ts': '1'.repeat(40), 'b.ts': '3'.repeat(40) }, { link: 'symlink' });
    const earlier = await carry.earlier(material('b'.repeat(40)), next);
    expect(earlier?.changed).toEqual(new Set(['b.ts']));
    expect(earlier?.outputs.json).toBe(join(t.store.scanDir(earlierId), 'result', 'output.json'));
    expect(earlier?.layout).toEqual(report.layout);
  });

  it('carries nothing when a path, link or submodule changed, a path is quoted, or the commit is the same', async () => {
    const blobs = { 'a.ts': '1'.repeat(40), 'b.ts': '2'.repeat(40) };
    const later = material('b'.repeat(40));
    expect(
      await carry.earlier(later, prepared({ ...blobs, 'c.ts': '4'.repeat(40) }, { link: 'symlink' })),
    ).toBeUndefined();
    expect(await carry.earlier(later, prepared(blobs, { link: 'submodule' }))).toBeUndefined();
    expect(await carry.earlier(later, prepared(blobs))).toBeUndefined();
    // A path git quotes has no blob id: its content could change unseen, so such a tree is neither kept nor carried.
    const quoted = (): PreparedSource => prepared(blobs, { link: 'symlink' }, ['"\\303\\251.ts"']);
    const quotedScan = await createdScan(t.store);
    await t.store.updateState(quotedScan, (s) => ({ ...s, state: 'completed' }));
    await carry.record(quotedScan, material('c'.repeat(40)), quoted(), report);
    expect(await carry.earlier(later, quoted())).toBeUndefined();
    expect(await carry.earlier(material('a'.repeat(40)), prepared(blobs, { link: 'symlink' }))).toBeUndefined();
    expect(await carry.earlier(later, prepared(blobs, { link: 'symlink' }))).toBeDefined();
  });
});
