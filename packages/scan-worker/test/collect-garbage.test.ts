import { describe, expect, it } from 'vitest';
import { fullGarbageCollection } from '../src/collect-garbage.js';

/** A reference to an object nothing else holds, made in a function so no local keeps it. */
function unreferenced(): WeakRef<object> {
  return new WeakRef({ rows: Array.from({ length: 1000 }, (_, i) => ({ i })) });
}

describe('fullGarbageCollection', () => {
  it('collects what nothing references, without --expose-gc on the command line', async () => {
    expect(process.execArgv).not.toContain('--expose-gc');
    const collect = fullGarbageCollection();
    expect(collect).toBeTypeOf('function');
    const ref = unreferenced();
    // A WeakRef keeps its target until the job that made or read it is over.
    const nextJob = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));
    await nextJob();
    expect(ref.deref()).toBeDefined();
    await nextJob();
    collect?.();
    expect(ref.deref()).toBeUndefined();
  });
});
