import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_WIRE_SCAN_OPTIONS } from '@reposcan/contracts';
import type { ScanReport, ScannedFileRecord } from '@reposcan/core';
import type { CloneListing, PreparedSource } from '@reposcan/sources';
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
  /** Paths with no blob id: names the scan shows quoted (not UTF-8). */
  noBlobId: string[] = [],
): PreparedSource {
  const tracked = [...Object.keys(blobs), ...Object.keys(other), ...noBlobId].sort();
  return {
    root: '/nowhere',
    repoName: 'r',
    source: { type: 'remote', url: null, hostFamily: null, ref: null, branch: 'main', commit: null, subdir: null },
    blobs: new Map(Object.entries(blobs)),
    sourceSkips: new Map(Object.entries(other)),
    git: { tracked, infoExclude: null },
  } as unknown as PreparedSource;
}

/** A text file's record as a scan lists it. */
const text = (path: string, size: number): ScannedFileRecord => ({
  path,
  size_bytes: size,
  subcategory: 'code',
  tokens: 1,
  tokens_estimate: 1,
  url: '',
});

const report = {
  tree: 'r\n',
  files: [text('.gitignore', 7), text('a.ts', 11), text('b.ts', 12)],
  assets: [],
  skipped: [],
  layout: {
    txt: { head: 1, blocks: [], links: [] },
    md: { head: 1, blocks: [], links: [] },
    json: { head: 1, blocks: [], links: [] },
  },
} as unknown as ScanReport;

/** A clone's listing, as prepared. */
const listing = (p: PreparedSource): CloneListing => ({
  blobs: p.blobs as ReadonlyMap<string, string>,
  tracked: p.git?.tracked ?? [],
  skips: p.sourceSkips ?? new Map(),
});

describe('OutputCarry', () => {
  let t: TempStore;
  let earlierId: string;
  const blobs = {
    '.gitignore': '0'.repeat(40),
    'a.ts': '1'.repeat(40),
    'b.ts': '2'.repeat(40),
    'c.png': '5'.repeat(40),
  };
  const newCarry = (): OutputCarry => new OutputCarry(new CarriedScans(t.store), t.store, pino({ level: 'silent' }));
  /** A new attempt's carry, having looked for the earlier scan at `commit` and been shown `next`. */
  const planned = async (next: PreparedSource, commit = 'b'.repeat(40)) => {
    const carry = newCarry();
    carry.look(material(commit));
    return { carry, unchanged: await carry.plan(listing(next)) };
  };
  beforeEach(async () => {
    t = await tempStore();
    earlierId = await createdScan(t.store);
    await t.store.updateState(earlierId, (s) => ({ ...s, state: 'completed' }));
    await newCarry().record(earlierId, material('a'.repeat(40)), prepared(blobs, { link: 'symlink' }), report);
  });
  afterEach(() => t.cleanup());

  it('leaves every unchanged regular file on the server, and has the engine carry the changed ones or refuse', async () => {
    const { carry, unchanged } = await planned(prepared({ ...blobs, 'b.ts': '3'.repeat(40) }, { link: 'symlink' }));
    // With the sizes the earlier scan saw (0 for a file it showed as no text or asset).
    expect(unchanged).toEqual(
      new Map([
        ['.gitignore', 7],
        ['a.ts', 11],
        ['c.png', 0],
      ]),
    );
    const earlier = carry.earlier();
    expect(earlier?.changed).toEqual(new Set(['b.ts']));
    expect(earlier?.fallback).toBe('refuse');
    expect(earlier?.outputs.json).toBe(join(t.store.scanDir(earlierId), 'result', 'output.json'));
    expect(earlier?.layout).toEqual(report.layout);
    // Refused by the engine: the scan is made again, and nothing is planned for it.
    carry.refuse();
    expect(carry.earlier()).toBeUndefined();
    expect(
      await carry.plan(listing(prepared({ ...blobs, 'b.ts': '3'.repeat(40) }, { link: 'symlink' }))),
    ).toBeUndefined();
  });

  it('plans nothing when a path, link or submodule changed, a name is not UTF-8, or the commit is the same', async () => {
    const none = async (next: PreparedSource, commit?: string): Promise<void> => {
      const { carry, unchanged } = await planned(next, commit);
      expect(unchanged).toBeUndefined();
      expect(carry.earlier()).toBeUndefined();
    };
    await none(prepared({ ...blobs, 'd.ts': '4'.repeat(40) }, { link: 'symlink' }));
    await none(prepared(blobs, { link: 'submodule' }));
    await none(prepared(blobs));
    await none(prepared(blobs, { link: 'symlink' }), 'a'.repeat(40));
    // A name that is not UTF-8 has no blob id: its content could change unseen, so such a tree is neither kept nor carried.
    const rawName = (): PreparedSource => prepared(blobs, { link: 'symlink' }, ['caf\udce9.ts']);
    const rawNameScan = await createdScan(t.store);
    await t.store.updateState(rawNameScan, (s) => ({ ...s, state: 'completed' }));
    await newCarry().record(rawNameScan, material('c'.repeat(40)), rawName(), report);
    await none(rawName());
    expect((await planned(prepared(blobs, { link: 'symlink' }))).unchanged).toBeDefined();
  });

  it('plans nothing when a changed file was no text or is an ignore file, which only a walk can take in', async () => {
    const { unchanged: asset } = await planned(prepared({ ...blobs, 'c.png': '6'.repeat(40) }, { link: 'symlink' }));
    expect(asset).toBeUndefined();
    const { unchanged: ignore } = await planned(
      prepared({ ...blobs, '.gitignore': '6'.repeat(40) }, { link: 'symlink' }),
    );
    expect(ignore).toBeUndefined();
  });

  it('plans nothing without a look for the earlier scan (a folder is never carried)', async () => {
    const carry = newCarry();
    carry.look({ ...material('b'.repeat(40)), identity: { ...material('b'.repeat(40)).identity, subdir: 'src' } });
    expect(
      await carry.plan(listing(prepared({ ...blobs, 'b.ts': '3'.repeat(40) }, { link: 'symlink' }))),
    ).toBeUndefined();
    expect(await newCarry().plan(listing(prepared(blobs, { link: 'symlink' })))).toBeUndefined();
  });
});
