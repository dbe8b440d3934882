import { randomBytes } from 'node:crypto';
import { readdir, readFile, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { compactTokenCache, VolumeTokenCache } from '../src/index.js';
import { tempStore } from './temp-store.js';
import type { TempStore } from './temp-store.js';

let temp: TempStore;
let dir: string;
beforeEach(async () => {
  temp = await tempStore();
  dir = temp.store.tokenCacheDir('o200k_base');
});
afterEach(() => temp.cleanup());

const keys = (n: number): Buffer[] => Array.from({ length: n }, () => randomBytes(16));
const segments = async (): Promise<string[]> => (await readdir(dir)).filter((name) => name.endsWith('.seg')).sort();

/** A worker's scan: learns counts, then flushes them as one segment. */
async function learn(cache: VolumeTokenCache, entries: Array<[Buffer, number]>): Promise<void> {
  for (const [key, tokens] of entries) cache.set(key, tokens);
  await cache.flush();
}

describe('VolumeTokenCache', () => {
  it('lives under DATA_DIR/token-cache/v1/<encoding>, and no other name gets a folder', () => {
    expect(dir).toBe(join(temp.dataDir, 'token-cache', 'v1', 'o200k_base'));
    expect(() => temp.store.tokenCacheDir('../../etc' as 'o200k_base')).toThrow();
  });

  it('what one worker learns, another worker on the same volume knows after its next sync', async () => {
    const a = await VolumeTokenCache.open(dir, { maxEntries: 1000 });
    const b = await VolumeTokenCache.open(dir, { maxEntries: 1000 });
    const learnt = keys(50).map((key, i): [Buffer, number] => [key, i * 3]);
    await b.sync();
    await learn(a, learnt);
    expect(b.get(learnt[0]?.[0] as Buffer)).toBeUndefined();
    await b.sync();
    for (const [key, tokens] of learnt) expect(b.get(key)).toBe(tokens);
    expect(b.size).toBe(50);
  });

  it('a flush with nothing learnt or used writes nothing; hits are written again so recent entries survive compaction', async () => {
    const cache = await VolumeTokenCache.open(dir, { maxEntries: 1000 });
    await cache.flush();
    expect(await segments()).toEqual([]);
    const [key] = keys(1) as [Buffer];
    await learn(cache, [[key, 9]]);
    expect(cache.get(key)).toBe(9);
    await cache.flush();
    const written = await segments();
    expect(written).toHaveLength(2);
    expect((await stat(join(dir, written[1] as string))).size).toBe(8 + 20 + 16);
  });

  it('ignores segments that are cut short, altered or foreign, and unfinished temporary files', async () => {
    const writer = await VolumeTokenCache.open(dir, { maxEntries: 1000 });
    const [good, bad] = keys(2) as [Buffer, Buffer];
    await learn(writer, [[good, 1]]);
    await learn(writer, [[bad, 2]]);
    // Two flushes in one millisecond order by their random suffix: find bad's segment by content.
    let badSegment = '';
    for (const name of await segments()) if ((await readFile(join(dir, name))).includes(bad)) badSegment = name;
    const bytes = await readFile(join(dir, badSegment));
    await writeFile(join(dir, badSegment), bytes.subarray(0, bytes.length - 3)); // a torn write
    await writeFile(
      join(dir, '000000000000001-aaaaaaaaaaaa.seg'),
      Buffer.concat([Buffer.from('RSTOKC01'), bad, Buffer.alloc(4, 0), Buffer.alloc(16)]),
    ); // wrong checksum
    await writeFile(join(dir, '.tmp-000000000000002-bbbbbbbbbbbb.seg'), 'partial');

    const reader = await VolumeTokenCache.open(dir, { maxEntries: 1000 });
    await reader.sync();
    expect(reader.get(good)).toBe(1);
    expect(reader.get(bad)).toBeUndefined();
    expect(reader.size).toBe(1);
  });

  it('holds at most maxEntries in memory, preferring the newest segments', async () => {
    const writer = await VolumeTokenCache.open(dir, { maxEntries: 1000 });
    const old = keys(30);
    const recent = keys(30);
    await learn(
      writer,
      old.map((k): [Buffer, number] => [k, 1]),
    );
    await new Promise((resolve) => setTimeout(resolve, 5)); // a later millisecond: a later segment name
    await learn(
      writer,
      recent.map((k): [Buffer, number] => [k, 2]),
    );
    const reader = await VolumeTokenCache.open(dir, { maxEntries: 40 });
    await reader.sync();
    expect(reader.size).toBe(40);
    for (const key of recent) expect(reader.get(key)).toBe(2);
  });
});

describe('compactTokenCache', () => {
  it('merges many segments into one and keeps the most recent maxEntries keys; readers lose nothing they need', async () => {
    const writer = await VolumeTokenCache.open(dir, { maxEntries: 10_000 });
    const batches = Array.from({ length: 20 }, () => keys(10));
    for (const [i, batch] of batches.entries()) {
      await learn(
        writer,
        batch.map((k): [Buffer, number] => [k, i]),
      );
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    expect(await segments()).toHaveLength(20);
    const report = await compactTokenCache(dir, { maxEntries: 150, maxSegments: 16 });
    expect(report).toMatchObject({ segmentsMerged: 20, entriesKept: 150 });
    expect(await segments()).toHaveLength(1);

    const reader = await VolumeTokenCache.open(dir, { maxEntries: 10_000 });
    await reader.sync();
    expect(reader.size).toBe(150);
    for (const [i, batch] of batches.entries())
      for (const key of batch) expect(reader.get(key)).toBe(i >= 5 ? i : undefined);
  });

  it('does nothing while the folder is small, and nothing to a folder that does not exist', async () => {
    const writer = await VolumeTokenCache.open(dir, { maxEntries: 100 });
    await learn(
      writer,
      keys(10).map((k): [Buffer, number] => [k, 1]),
    );
    expect(await compactTokenCache(dir, { maxEntries: 100 })).toBeNull();
    expect(await compactTokenCache(join(dir, 'missing'), { maxEntries: 100 })).toBeNull();
  });

  it('two compactions at once leave every entry readable', async () => {
    const writer = await VolumeTokenCache.open(dir, { maxEntries: 10_000 });
    const all = keys(200);
    for (let i = 0; i < 20; i++)
      await learn(
        writer,
        all.slice(i * 10, i * 10 + 10).map((k): [Buffer, number] => [k, 5]),
      );
    await Promise.all([
      compactTokenCache(dir, { maxEntries: 1000, maxSegments: 4 }),
      compactTokenCache(dir, { maxEntries: 1000, maxSegments: 4 }),
    ]);
    const reader = await VolumeTokenCache.open(dir, { maxEntries: 10_000 });
    await reader.sync();
    for (const key of all) expect(reader.get(key)).toBe(5);
  });

  it('a worker whose memory holds more than compaction kept starts again from the folder', async () => {
    const worker = await VolumeTokenCache.open(dir, { maxEntries: 100 });
    for (let i = 0; i < 3; i++)
      await learn(
        worker,
        keys(60).map((k): [Buffer, number] => [k, 1]),
      );
    expect(worker.size).toBe(180); // learnt entries are all kept until the next sync
    await compactTokenCache(dir, { maxEntries: 100 });
    await worker.sync();
    expect(worker.size).toBe(100);
  });

  it('removes temporary files a crash left an hour ago, not ones being written now', async () => {
    await VolumeTokenCache.open(dir, { maxEntries: 100 });
    const stale = join(dir, '.tmp-000000000000001-cccccccccccc.seg');
    const fresh = join(dir, '.tmp-000000000000002-dddddddddddd.seg');
    await writeFile(stale, 'x');
    await writeFile(fresh, 'x');
    const hourAgo = new Date(Date.now() - 2 * 3_600_000);
    await utimes(stale, hourAgo, hourAgo);
    expect(await compactTokenCache(dir, { maxEntries: 100 })).toEqual({
      segmentsMerged: 0,
      entriesKept: 0,
      debrisRemoved: 1,
    });
    expect(await readdir(dir)).toEqual(['.tmp-000000000000002-dddddddddddd.seg']);
  });
});
