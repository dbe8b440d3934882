import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_WIRE_SCAN_OPTIONS, SCAN_OPTION_NAMES, SCAN_OPTIONS } from '@reposcan/contracts';
import { CarriedScans, CommitCache, commitCacheKey } from '../src/index.js';
import type { CommitCacheMaterial } from '../src/index.js';
import { createdScan, errorCode, tempStore } from './temp-store.js';
import type { TempStore } from './temp-store.js';

const material = (overrides: Partial<CommitCacheMaterial> = {}): CommitCacheMaterial => ({
  identity: {
    url: 'https://github.com/octocat/Hello-World',
    hostFamily: 'github',
    repoName: 'Hello-World',
    branch: 'main',
    commit: 'a'.repeat(40),
    subdir: null,
    baseCommit: null,
  },
  options: { ...DEFAULT_WIRE_SCAN_OPTIONS },
  encoding: 'o200k_base',
  settings: { version: '0.1.0', maxFiles: 50_000, maxDepth: 50, maxFileBytes: 1 << 20 },
  ...overrides,
});

/** A scan of `t`'s store, completed. */
async function completedScanIn(t: TempStore): Promise<string> {
  const id = await createdScan(t.store);
  await t.store.updateState(id, (s) => ({ ...s, state: 'completed', completed_at: new Date().toISOString() }));
  return id;
}

/** Some other valid value of every option of the table, whatever its kind. */
function otherValue(name: (typeof SCAN_OPTION_NAMES)[number]): unknown {
  const row = SCAN_OPTIONS[name] as { kind: string; default?: unknown; values?: readonly string[]; min?: number };
  if (row.kind === 'switch') return !row.default;
  if (row.kind === 'list') return ['x'];
  if (row.kind === 'choice') return row.values?.find((v) => v !== row.default);
  return (row.min ?? 0) + 1;
}

describe('commit cache key', () => {
  it('changes with every option of the table, so a new option is part of it without a change', () => {
    const base = commitCacheKey(material());
    const keys = new Set([base]);
    for (const name of SCAN_OPTION_NAMES) {
      const options = { ...DEFAULT_WIRE_SCAN_OPTIONS, [name]: otherValue(name) };
      keys.add(commitCacheKey(material({ options })));
    }
    expect(keys.size).toBe(SCAN_OPTION_NAMES.length + 1);
  });

  it('changes with the commit, branch, folder, base commit, encoding, version and limits; not with the order of settings', () => {
    const m = material();
    const variants = [
      material({ identity: { ...m.identity, commit: 'b'.repeat(40) } }),
      material({ identity: { ...m.identity, branch: 'dev' } }),
      material({ identity: { ...m.identity, subdir: 'docs' } }),
      material({ identity: { ...m.identity, baseCommit: 'c'.repeat(40) } }),
      material({ identity: { ...m.identity, baseCommit: 'd'.repeat(40) } }),
      material({ encoding: 'cl100k_base' }),
      material({ settings: { ...m.settings, version: '0.2.0' } }),
      material({ settings: { ...m.settings, maxFileBytes: 1 } }),
    ];
    const keys = new Set([commitCacheKey(m), ...variants.map(commitCacheKey)]);
    expect(keys.size).toBe(variants.length + 1);
    const reordered = Object.fromEntries(Object.entries(m.settings).reverse());
    expect(commitCacheKey(material({ settings: reordered }))).toBe(commitCacheKey(m));
  });
});

describe('CommitCache', () => {
  let t: TempStore;
  let cache: CommitCache;
  beforeEach(async () => {
    t = await tempStore();
    cache = new CommitCache(t.store);
  });
  afterEach(() => t.cleanup());

  const completedScan = (): Promise<string> => completedScanIn(t);

  it('finds a completed scan recorded under the same material, and nothing under another', async () => {
    const id = await completedScan();
    expect(await cache.knowsRepository(material().identity.url)).toBe(false);
    await cache.record(id, material());
    expect(await cache.knowsRepository(material().identity.url)).toBe(true);
    expect(await cache.find(material())).toBe(id);
    expect(await cache.find(material({ encoding: 'cl100k_base' }))).toBeNull();
  });

  it('does not believe an entry whose scan is not completed, is gone, or holds another key', async () => {
    const running = await createdScan(t.store);
    await cache.record(running, material());
    expect(await cache.find(material())).toBeNull();

    const id = await completedScan();
    await cache.record(id, material());
    await writeFile(join(t.store.scanDir(id), 'commit-key'), `${'0'.repeat(64)}\n`);
    expect(await cache.find(material())).toBeNull();

    await cache.record(id, material());
    await t.store.remove(id);
    expect(await cache.find(material())).toBeNull();
    expect(await cache.sweep()).toBe(1);
    expect(await cache.knowsRepository(material().identity.url)).toBe(false);
  });

  it('links a published result into another scan: the same files, one copy on disk', async () => {
    const from = await completedScan();
    const staging = await t.store.createStaging(from, 1);
    await writeFile(join(staging.outDir, 'output.txt'), 'the text');
    await writeFile(join(staging.outDir, 'summary.json'), '{}');
    await t.store.publish(from, staging.outDir);

    const to = await createdScan(t.store);
    const out = (await t.store.createStaging(to, 0)).outDir;
    expect(await t.store.linkPublished(from, out)).toEqual(['output.txt']);
    expect(await readFile(join(out, 'output.txt'), 'utf8')).toBe('the text');
    expect((await stat(join(out, 'output.txt'))).nlink).toBe(2);

    await t.store.remove(from);
    expect(await readFile(join(out, 'output.txt'), 'utf8')).toBe('the text');
    expect(await errorCode(() => t.store.linkPublished(from, out))).toBe('SCAN_NOT_FOUND');
  });
});

describe('CarriedScans', () => {
  let t: TempStore;
  let carried: CarriedScans;
  beforeEach(async () => {
    t = await tempStore();
    carried = new CarriedScans(t.store);
  });
  afterEach(() => t.cleanup());

  const completedScan = (): Promise<string> => completedScanIn(t);
  const m = material();
  const atCommit = (commit: string): CommitCacheMaterial => material({ identity: { ...m.identity, commit } });

  it('finds the newest completed scan of a line, whatever its commit, with what it kept', async () => {
    const older = await completedScan();
    await carried.record(older, atCommit('b'.repeat(40)), { kept: 'older' });
    const newer = await completedScan();
    await carried.record(newer, atCommit('c'.repeat(40)), { kept: 'newer' });
    expect(await carried.find(m)).toEqual({ scanId: newer, carry: { kept: 'newer' } });
    // Another branch or other options are another line.
    expect(await carried.find(material({ identity: { ...m.identity, branch: 'dev' } }))).toBeNull();
    expect(await carried.find(material({ encoding: 'cl100k_base' }))).toBeNull();
  });

  it('does not believe a line whose scan is not completed, is gone, or kept another line', async () => {
    const running = await createdScan(t.store);
    await carried.record(running, m, { kept: 1 });
    expect(await carried.find(m)).toBeNull();

    const id = await completedScan();
    await carried.record(id, m, { kept: 2 });
    await carried.record(id, material({ encoding: 'cl100k_base' }), { kept: 3 });
    expect(await carried.find(m)).toBeNull();

    await carried.record(id, m, { kept: 4 });
    await writeFile(join(t.store.scanDir(id), 'carry.json'), '{"key":');
    expect(await carried.find(m)).toBeNull();

    await carried.record(id, m, { kept: 5 });
    expect(await carried.find(m)).toEqual({ scanId: id, carry: { kept: 5 } });
    await t.store.remove(id);
    expect(await carried.find(m)).toBeNull();
  });
});
