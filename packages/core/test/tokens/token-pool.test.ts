import { Buffer } from 'node:buffer';
import { getEventListeners } from 'node:events';
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

/** The thread count once threads of earlier tests' pools have finished exiting. */
async function settledThreads(): Promise<number> {
  for (let last = osThreads(); ;) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const now = osThreads();
    if (now === last) return now;
    last = now;
  }
}

const utf8 = (text: string): Uint8Array => Buffer.from(text, 'utf8');
/** UTF-8 bytes in a SharedArrayBuffer, as the engine's reader produces them. */
function sharedUtf8(text: string): Uint8Array {
  const bytes = utf8(text);
  const shared = new Uint8Array(new SharedArrayBuffer(bytes.length + 1), 0, bytes.length);
  shared.set(bytes);
  return shared;
}

describe('createTokenPool', () => {
  const texts = [GROUPS.ts, GROUPS.js, GROUPS.md, GROUPS.json]
    .flatMap((group) => sampleGroup(group, 150_000))
    .map((file) => file.text);
  const contents = texts.map(sharedUtf8);

  it.each(['o200k_base', 'cl100k_base'] as const)(
    'counts batches in input order, as the in-thread counter does (%s)',
    async (encoding: TokenEncodingName) => {
      const counter = createTokenCounter(encoding);
      const tokens = pool({ encoding, threads: 2 });
      const results = await Promise.all(batches(contents, 50).map((batch) => tokens.count(batch)));
      expect(results.flat()).toEqual(texts.map((text) => counter.count(text)));
    },
  );

  it.each(['o200k_base', 'cl100k_base'] as const)(
    'counts a content too big for one thread in parts counted side by side, to the exact whole count (%s)',
    async (encoding: TokenEncodingName) => {
      const counter = createTokenCounter(encoding);
      // About 4.5 MB of mixed real text in one file, between two small ones.
      let big = '';
      while (big.length < 4_500_000) big += texts.join('\n');
      const batch = [sharedUtf8(texts[0] as string), sharedUtf8(big), sharedUtf8(texts[1] as string)];
      const tokens = pool({ encoding, threads: 2 });
      expect(await tokens.count(batch)).toEqual([
        counter.count(texts[0] as string),
        counter.count(big),
        counter.count(texts[1] as string),
      ]);
    },
  );

  it('counts contents the same whether they are shared, plain or views into larger buffers', async () => {
    const tokens = pool({ encoding: 'o200k_base', threads: 1 });
    const text = 'naïve café 😀 <|endoftext|>\n';
    const framed = utf8(`xx${text}yy`).subarray(2, 2 + utf8(text).length);
    await expect(tokens.count([sharedUtf8(text), utf8(text), framed])).resolves.toEqual(
      Array(3).fill(createTokenCounter('o200k_base').count(text)),
    );
  });

  it('defaults to one thread per core and warms every worker', async () => {
    const tokens = pool({ encoding: 'o200k_base' });
    expect(tokens.threads).toBe(availableParallelism());
    await expect(tokens.warm()).resolves.toBeUndefined();
    await expect(tokens.count([utf8('hello world'), utf8('<|endoftext|>')])).resolves.toEqual([2, 7]);
  });

  it('counts in the calling thread with zero threads', async () => {
    const tokens = pool({ encoding: 'o200k_base', threads: 0 });
    await tokens.warm();
    await expect(tokens.count([utf8('hello world'), utf8('')])).resolves.toEqual([2, 0]);
    await expect(tokens.count([])).resolves.toEqual([]);
  });

  it('rejects the batch of a worker that dies, keeps other batches, and recovers', async () => {
    const tokens = pool({ encoding: 'o200k_base', threads: 2, exitOnTextForTest: '\u0000exit' });
    await tokens.warm();
    const doomed = tokens.count(['a', '\u0000exit', 'b'].map(utf8));
    const healthy = tokens.count([utf8('hello world')]);
    await expect(doomed).rejects.toThrow(/Token worker exited with code 70/);
    await expect(healthy).resolves.toEqual([2]);
    await expect(tokens.count([utf8('hello world'), utf8('again')])).resolves.toEqual([2, 1]);
    await expect(
      Promise.all(batches(contents.slice(0, 40), 10).map((batch) => tokens.count(batch))),
    ).resolves.toHaveLength(4);
  });

  it('rejects instead of hanging when the encoding tables cannot load', async () => {
    const tokens = pool({ encoding: 'no_such_encoding' as TokenEncodingName, threads: 1 });
    await expect(tokens.count([utf8('x')])).rejects.toThrow('Unknown token encoding: no_such_encoding');
    await expect(tokens.warm()).rejects.toThrow('Unknown token encoding: no_such_encoding');
  });

  it.skipIf(platform() !== 'linux')('ends its worker threads on close()', async () => {
    const before = await settledThreads();
    const tokens = pool({ encoding: 'o200k_base', threads: 2 });
    await tokens.warm();
    expect(osThreads()).toBeGreaterThanOrEqual(before + 2);
    const pending = expect(tokens.count(contents.slice(0, 50))).rejects.toThrow('TokenPool is closed');
    await tokens.close();
    await pending;
    await expect(tokens.count([utf8('x')])).rejects.toThrow('TokenPool is closed');
    await expect.poll(osThreads, { timeout: 5_000 }).toBeLessThanOrEqual(before);
  });

  it('drops a waiting batch whose signal aborts, and ends the thread under a running one that does not finish in time', async () => {
    const counter = createTokenCounter('o200k_base');
    const tokens = pool({ encoding: 'o200k_base', threads: 1 });
    await tokens.warm();
    // Long enough that one thread is still counting it well after the grace period.
    const big = sharedUtf8(texts.join('\n').repeat(Math.ceil(40_000_000 / texts.join('\n').length)));
    const reason = new Error('scan cancelled');

    const running = new AbortController();
    const first = tokens.count([big], running.signal);
    const waiting = new AbortController();
    const second = tokens.count([contents[0] as Uint8Array], waiting.signal);
    const third = tokens.count([contents[1] as Uint8Array]);
    waiting.abort(reason);
    await expect(second).rejects.toBe(reason);
    running.abort(reason);
    await expect(first).rejects.toBe(reason);
    // The batch queued behind them runs on a replacement thread, with the right count.
    expect(await third).toEqual([counter.count(texts[1] as string)]);
    await expect(tokens.count([utf8('after')], AbortSignal.abort(reason))).rejects.toBe(reason);
    expect(await tokens.count([utf8('hello world')])).toEqual([counter.count('hello world')]);
  });

  it('listens to a signal once however many of its batches wait, and lets go of it when they are done', async () => {
    const counter = createTokenCounter('o200k_base');
    const tokens = pool({ encoding: 'o200k_base', threads: 1 });
    await tokens.warm();
    const listeners = (signal: AbortSignal): number => getEventListeners(signal, 'abort').length;

    const scan = new AbortController();
    const counted = Array.from({ length: 40 }, (_, i) => tokens.count([utf8(`batch ${i}`)], scan.signal));
    // One for the waiting batches, one for the batch the thread runs.
    expect(listeners(scan.signal)).toBeLessThanOrEqual(2);
    expect(await Promise.all(counted)).toEqual(counted.map((_, i) => [counter.count(`batch ${i}`)]));
    expect(listeners(scan.signal)).toBe(0);

    const cancelled = new AbortController();
    const reason = new Error('scan cancelled');
    const dropped = Array.from({ length: 40 }, () => tokens.count([contents[0] as Uint8Array], cancelled.signal));
    const other = tokens.count([utf8('hello world')]);
    cancelled.abort(reason);
    for (const batch of dropped) await expect(batch).rejects.toBe(reason);
    expect(await other).toEqual([counter.count('hello world')]);
    expect(listeners(cancelled.signal)).toBe(0);
  });
});
