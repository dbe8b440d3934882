import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it, onTestFinished } from 'vitest';
import { IoThreads } from '../../src/io/io-threads.js';
import { useTempTrees } from '../walk/walk-fixture.js';

// A file of its own: this test needs no other thread starting or ending while it counts them.
const tree = useTempTrees();
const threadCount = (): number => readdirSync('/proc/self/task').length;
/**
 * The thread count once it has not moved for `quietMs`. A thread started from TypeScript sources
 * boots its loader too, with pauses longer than 100 ms while it compiles.
 */
const steady = async (quietMs: number): Promise<number> => {
  for (let last = threadCount(); ;) {
    await new Promise((resolve) => setTimeout(resolve, quietMs));
    const now = threadCount();
    if (now === last) return now;
    last = now;
  }
};

it.runIf(process.platform === 'linux')(
  'prepareFiles starts both file threads up front, so reads at once start none mid-scan',
  async () => {
    const root = await tree({ 'a.txt': 'alpha', 'b.txt': 'bravo' });
    const io = new IoThreads();
    onTestFinished(() => io.close());
    const none = await steady(100);
    io.prepareFiles();
    io.prepareFiles();
    const prepared = await steady(1000);
    expect(prepared).toBeGreaterThan(none);
    // Two batches in flight at once: with only one thread started, the second would start another.
    const [a, b] = await Promise.all([
      io.readFiles([{ absPath: join(root, 'a.txt') }], 100),
      io.readFiles([{ absPath: join(root, 'b.txt') }], 100),
    ]);
    expect([a, b].map((outcomes) => outcomes.map((o) => (o.ok ? Buffer.from(o.bytes).toString() : o.reason)))).toEqual([
      ['alpha'],
      ['bravo'],
    ]);
    expect(await steady(1000)).toBe(prepared);
  },
);
