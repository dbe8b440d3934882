import { readdirSync } from 'node:fs';
import { availableParallelism, platform } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { createTokenCounter, createTokenPool } from '../../src/tokens/index.js';
import type { TokenPool } from '../../src/tokens/index.js';
import type { TokenEncodingName } from '../../src/types.js';
import { GROUPS, sampleGroup } from './corpus.js';

const pools: TokenPool[] = [];
function pool(options: Parameters<typeof createTokenPool>[0]): TokenPool {
  const created = createTokenPool(options);
  pools.push(created);
  return created;
}
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

function batches<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** OS threads of this process (Linux): each worker thread is one. */
const osThreads = (): number => readdirSync('/proc/self/task').length;

describe('createTokenPool', () => {
  const texts = [GROUPS.ts, GROUPS.js, GROUPS.md, GROUPS.json].flatMap((group) => sampleGroup(group, 150_000)).map((file) => file.text);

  it.each(['o200k_base', 'cl100k_base'] as const)('counts batches in input order, as the in-thread counter does (%s)', async (encoding: TokenEncodingName) => {
    const counter = createTokenCounter(encoding);
    const tokens = pool({ encoding, threads: 2 });
    const results = await Promise.all(batches(texts, 50).map((batch) => tokens.count(batch)));
    expect(results.flat()).toEqual(texts.map((text) => counter.count(text)));
  });

  it('defaults to one thread per core and warms every worker', async () => {
    const tokens = pool({ encoding: 'o200k_base' });
    expect(tokens.threads).toBe(availableParallelism());
    await expect(tokens.warm()).resolves.toBeUndefined();
    await expect(tokens.count(['hello world', '<|endoftext|>'])).resolves.toEqual([2, 7]);
  });

  it('counts in the calling thread with zero threads', async () => {
    const tokens = pool({ encoding: 'o200k_base', threads: 0 });
    await tokens.warm();
    await expect(tokens.count(['hello world', ''])).resolves.toEqual([2, 0]);
    await expect(tokens.count([])).resolves.toEqual([]);
  });

  it('rejects the batch of a worker that dies, keeps other batches, and recovers', async () => {
    const tokens = pool({ encoding: 'o200k_base', threads: 2, exitOnTextForTest: '\u0000exit' });
    await tokens.warm();
    const doomed = tokens.count(['a', '\u0000exit', 'b']);
    const healthy = tokens.count(['hello world']);
    await expect(doomed).rejects.toThrow(/Token worker exited with code 70/);
    await expect(healthy).resolves.toEqual([2]);
    await expect(tokens.count(['hello world', 'again'])).resolves.toEqual([2, 1]);
    await expect(Promise.all(batches(texts.slice(0, 40), 10).map((batch) => tokens.count(batch)))).resolves.toHaveLength(4);
  });

  it('rejects instead of hanging when workers cannot start', async () => {
    const tokens = pool({ encoding: 'no_such_encoding' as TokenEncodingName, threads: 1 });
    await expect(tokens.count(['x'])).rejects.toThrow(/Token worker exited/);
    await expect(tokens.warm()).rejects.toThrow(/Token worker exited/);
  });

  it.skipIf(platform() !== 'linux')('ends its worker threads on close()', async () => {
    const before = osThreads();
    const tokens = pool({ encoding: 'o200k_base', threads: 2 });
    await tokens.warm();
    expect(osThreads()).toBeGreaterThanOrEqual(before + 2);
    const pending = expect(tokens.count(texts.slice(0, 50))).rejects.toThrow('TokenPool is closed');
    await tokens.close();
    await pending;
    await expect(tokens.count(['x'])).rejects.toThrow('TokenPool is closed');
    await expect.poll(osThreads, { timeout: 5_000 }).toBeLessThanOrEqual(before);
  });
});
