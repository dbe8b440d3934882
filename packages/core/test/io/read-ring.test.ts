import { describe, expect, it } from 'vitest';
import { ReadRing, returnRing, takeRing } from '../../src/io/read-ring.js';

describe('ReadRing', () => {
  it('hands out regions one after another and refuses what does not fit until the oldest is released', () => {
    const ring = new ReadRing(100);
    expect(ring.tryAcquire(40)).toEqual({ start: 0, end: 40 });
    expect(ring.tryAcquire(40)).toEqual({ start: 40, end: 80 });
    expect(ring.tryAcquire(30)).toBeNull(); // 20 left at the end, nothing free at the start
    ring.releaseOldest();
    expect(ring.tryAcquire(30)).toEqual({ start: 0, end: 30 }); // wraps around
    expect(ring.tryAcquire(11)).toBeNull(); // only [30, 40) is free before the oldest
    expect(ring.tryAcquire(10)).toEqual({ start: 30, end: 40 });
  });

  it('never hands out memory that a live region holds, whatever the order of sizes', () => {
    const ring = new ReadRing(1000);
    const live: Array<{ start: number; end: number }> = [];
    let seed = 7;
    const random = (n: number): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) % n) + 1;
    for (let step = 0; step < 5000; step++) {
      const region = ring.tryAcquire(random(400));
      if (region === null) {
        expect(live.length).toBeGreaterThan(0); // an empty ring always has room
        ring.releaseOldest();
        live.shift();
        continue;
      }
      expect(region.end).toBeLessThanOrEqual(1000);
      for (const other of live) expect(region.end <= other.start || region.start >= other.end).toBe(true);
      live.push(region);
    }
  });

  it('starts over at the beginning once empty, and refuses a region larger than itself', () => {
    const ring = new ReadRing(10);
    ring.tryAcquire(6);
    ring.releaseOldest();
    expect(ring.tryAcquire(10)).toEqual({ start: 0, end: 10 });
    expect(() => ring.tryAcquire(11)).toThrow(RangeError);
  });

  it('is reused by the next scan in the same thread once returned', () => {
    const first = takeRing(64);
    first.tryAcquire(10);
    returnRing(first);
    const second = takeRing(32);
    expect(second).toBe(first);
    expect(second.tryAcquire(64)).toEqual({ start: 0, end: 64 }); // returned empty
    expect(takeRing(128)).not.toBe(first);
  });
});
