// The --local token cache on disk: what one run learns the next one finds, the folder stays
// under its cap, and a folder that cannot be used means counting, not failing.
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tokenCacheKey } from '@reposcan/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { userCacheFolder } from '../src/user-cache-folder.js';
import { openUserTokenCache } from '../src/user-token-cache.js';

const key = (text: string): Uint8Array => tokenCacheKey(Buffer.from(text));

describe('openUserTokenCache', () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'reposcan-user-cache-'));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('a count saved by one run is a hit for the next, per encoding', async () => {
    const first = await openUserTokenCache(root, 'o200k_base');
    expect(first!.cache.get(key('hello'))).toBeUndefined();
    first!.cache.set(key('hello'), 7);
    await first!.save();

    const second = await openUserTokenCache(root, 'o200k_base');
    expect(second!.cache.get(key('hello'))).toBe(7);
    expect(second!.cache.get(key('other'))).toBeUndefined();
    // Another encoding counts differently: its own folder, empty.
    const other = await openUserTokenCache(root, 'cl100k_base');
    expect(other!.cache.get(key('hello'))).toBeUndefined();
    expect((await readdir(join(root, 'tokens'))).sort()).toEqual(['cl100k_base', 'o200k_base']);
  });

  it('keeps at most maxEntries on disk, the newest ones', async () => {
    const cap = 50;
    for (let run = 0; run < 12; run++) {
      const cache = await openUserTokenCache(root, 'o200k_base', cap);
      for (let i = 0; i < 20; i++) cache!.cache.set(key(`run ${run} file ${i}`), run * 100 + i);
      await cache!.save();
    }
    const dir = join(root, 'tokens', 'o200k_base');
    const segments = await readdir(dir);
    // 12 runs × 20 entries were written; compaction leaves the cap's worth (20 bytes each, plus header and check).
    expect(segments.length).toBeLessThanOrEqual(8);
    let bytes = 0;
    for (const name of segments) bytes += (await stat(join(dir, name))).size;
    expect(bytes).toBeLessThanOrEqual(cap * 20 + segments.length * 24);
    const last = await openUserTokenCache(root, 'o200k_base', cap);
    expect(last!.cache.get(key('run 11 file 19'))).toBe(1119);
    expect(last!.cache.get(key('run 0 file 0'))).toBeUndefined();
  });

  it('a cache folder that cannot be made is no cache (null), not an error', async () => {
    const blocker = join(root, 'a-file');
    await writeFile(blocker, 'not a folder');
    expect(await openUserTokenCache(blocker, 'o200k_base')).toBeNull();
  });

  it('lives in $XDG_CACHE_HOME/reposcan, else ~/.cache/reposcan (a relative XDG_CACHE_HOME is ignored)', () => {
    expect(userCacheFolder({ XDG_CACHE_HOME: '/x/cache', HOME: '/home/u' })).toBe('/x/cache/reposcan');
    expect(userCacheFolder({ HOME: '/home/u' })).toBe('/home/u/.cache/reposcan');
    expect(userCacheFolder({ XDG_CACHE_HOME: 'rel', HOME: '/home/u' })).toBe('/home/u/.cache/reposcan');
  });
});
