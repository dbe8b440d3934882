import { randomUUID } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import type { ScanStateRecord } from '@reposcan/contracts';
import { createLocalStateSignals } from '@reposcan/queue';
import type { StateSignals } from '@reposcan/queue';
import { StateWatchers } from '../src/services/state-watch.js';

// The fallback is an hour unless a test is about it: whatever brings a reading here is a
// signal or a first read, never the timer.
const HOUR = 3_600_000;

function record(scanId: string, state: ScanStateRecord['state'], filesDone = 0): ScanStateRecord {
  const now = new Date().toISOString();
  return {
    version: 1,
    scan_id: scanId,
    state,
    source: { type: 'local', url: null },
    created_at: now,
    updated_at: now,
    started_at: null,
    completed_at: null,
    attempt: 0,
    progress: { phase: state === 'queued' ? 'queued' : 'scanning', files_done: filesDone, files_total: 10 },
    error: null,
    result: null,
  } as ScanStateRecord;
}

/** A volume of state records that counts its reads and stamps; `hold` makes reads wait until released. */
class FakeVolume {
  readonly states = new Map<string, ScanStateRecord | null>();
  reads = 0;
  stamps = 0;
  private held: Array<() => void> | null = null;
  failNext: Error | null = null;

  read = async (scanId: string): Promise<ScanStateRecord | null> => {
    this.reads++;
    const failure = this.failNext;
    this.failNext = null;
    if (this.held) await new Promise<void>((resolve) => this.held?.push(resolve));
    if (failure) throw failure;
    return this.states.get(scanId) ?? null;
  };

  /** The state's stamp: a new one with every record set. */
  stamp = (scanId: string): Promise<string | null> => {
    this.stamps++;
    const state = this.states.get(scanId);
    return Promise.resolve(
      state ? `${state.state}:${state.progress.files_done}:${this.versions.get(state) ?? 0}` : null,
    );
  };

  private readonly versions = new WeakMap<ScanStateRecord, number>();
  private version = 0;

  /** Sets a scan's state as a write would, with a new stamp. */
  set(scanId: string, state: ScanStateRecord): void {
    this.versions.set(state, ++this.version);
    this.states.set(scanId, state);
  }

  hold(): void {
    this.held = [];
  }

  release(): void {
    const waiting = this.held ?? [];
    this.held = null;
    for (const resume of waiting) resume();
  }
}

/** Collects every reading one subscriber gets; `next(n)` waits (at most 5 s) until it has n. */
class Listener {
  readonly readings: Array<{ record: ScanStateRecord | null; error?: Error }> = [];
  private waiting: Array<() => void> = [];

  on = (record: ScanStateRecord | null, error?: Error): void => {
    this.readings.push(error === undefined ? { record } : { record, error });
    for (const wake of this.waiting.splice(0)) wake();
  };

  async count(n: number): Promise<number> {
    const deadline = Date.now() + 5_000;
    while (this.readings.length < n && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, deadline - Date.now());
        this.waiting.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.readings.length;
  }

  states(): string[] {
    return this.readings.map((r) => r.record?.state ?? (r.error ? 'error' : 'gone'));
  }
}

/** Lets pending reads and their deliveries run. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

function countingSignals(): StateSignals & { listening: () => number } {
  const signals = createLocalStateSignals();
  let listening = 0;
  return {
    ...signals,
    listening: () => listening,
    listen: (id, onChange) => {
      listening++;
      const stop = signals.listen(id, onChange);
      return () => {
        listening--;
        stop();
      };
    },
  };
}

describe('StateWatchers', () => {
  it('many waiters on one scan share one watcher: one signal, one read, every waiter gets it', async () => {
    const signals = countingSignals();
    const volume = new FakeVolume();
    const watchers = new StateWatchers({ signals, read: volume.read, fallbackMs: HOUR });
    const scan = randomUUID();
    volume.states.set(scan, record(scan, 'queued'));
    const listeners = Array.from({ length: 50 }, () => new Listener());
    const stops = listeners.map((l) => watchers.watch(scan, l.on));
    expect(watchers.size).toBe(1);
    expect(signals.listening()).toBe(1);

    volume.states.set(scan, record(scan, 'running'));
    signals.announce(scan);
    for (const l of listeners) expect(await l.count(1)).toBe(1);
    expect(volume.reads).toBe(1);
    for (const l of listeners) expect(l.states()).toEqual(['running']);

    for (const stop of stops) stop();
    expect(watchers.size).toBe(0);
    expect(signals.listening()).toBe(0);
  });

  it('waiters that all ask for the state now at once cost two reads, not one each', async () => {
    const volume = new FakeVolume();
    const watchers = new StateWatchers({ signals: createLocalStateSignals(), read: volume.read, fallbackMs: HOUR });
    const scan = randomUUID();
    volume.states.set(scan, record(scan, 'queued'));
    const listeners = Array.from({ length: 50 }, () => new Listener());
    const stops = listeners.map((l) => watchers.watch(scan, l.on, true));
    for (const l of listeners) expect(await l.count(1)).toBeGreaterThanOrEqual(1);
    // The first read started before the other 49 joined; they get the one read after it.
    expect(volume.reads).toBe(2);
    for (const l of listeners) expect(l.states().at(-1)).toBe('queued');
    for (const stop of stops) stop();
  });

  it('a signal for another scan reads nothing', async () => {
    const signals = createLocalStateSignals();
    const volume = new FakeVolume();
    const watchers = new StateWatchers({ signals, read: volume.read, fallbackMs: HOUR });
    const scan = randomUUID();
    const listener = new Listener();
    const stop = watchers.watch(scan, listener.on);
    signals.announce(randomUUID());
    await settle();
    expect(volume.reads).toBe(0);
    expect(listener.readings).toEqual([]);
    stop();
  });

  it('a read that began before a waiter joined never reaches it, so no waiter sees the state go back', async () => {
    const signals = createLocalStateSignals();
    const volume = new FakeVolume();
    const watchers = new StateWatchers({ signals, read: volume.read, fallbackMs: HOUR });
    const scan = randomUUID();
    volume.states.set(scan, record(scan, 'queued'));
    const early = new Listener();
    const late = new Listener();
    volume.hold();
    const stopEarly = watchers.watch(scan, early.on, true);
    const stopLate = watchers.watch(scan, late.on);
    volume.release();
    expect(await early.count(1)).toBe(1);
    await settle();
    expect(late.readings).toEqual([]);

    volume.states.set(scan, record(scan, 'running'));
    signals.announce(scan);
    expect(await late.count(1)).toBe(1);
    expect(await early.count(2)).toBe(2);
    expect(early.states()).toEqual(['queued', 'running']);
    expect(late.states()).toEqual(['running']);
    stopEarly();
    stopLate();
  });

  it('signals during a read are folded into one more read after it', async () => {
    const signals = createLocalStateSignals();
    const volume = new FakeVolume();
    const watchers = new StateWatchers({ signals, read: volume.read, fallbackMs: HOUR });
    const scan = randomUUID();
    volume.states.set(scan, record(scan, 'running', 1));
    const listener = new Listener();
    const stop = watchers.watch(scan, listener.on);
    volume.hold();
    signals.announce(scan);
    for (let i = 2; i <= 10; i++) {
      volume.states.set(scan, record(scan, 'running', i));
      signals.announce(scan);
    }
    volume.release();
    expect(await listener.count(2)).toBe(2);
    await settle();
    expect(volume.reads).toBe(2);
    expect(listener.readings.at(-1)?.record?.progress.files_done).toBe(10);
    stop();
  });

  it('a lost signal is caught by the fallback tick', async () => {
    const volume = new FakeVolume();
    // Signals exist but this change is never announced, as when a Redis message is lost.
    const watchers = new StateWatchers({ signals: createLocalStateSignals(), read: volume.read, fallbackMs: 50 });
    const scan = randomUUID();
    volume.states.set(scan, record(scan, 'running'));
    const listener = new Listener();
    const stop = watchers.watch(scan, listener.on);
    volume.states.set(scan, record(scan, 'completed'));
    expect(await listener.count(1)).toBeGreaterThanOrEqual(1);
    expect(listener.states().at(-1)).toBe('completed');
    stop();
  });

  it('a fallback tick reads the state only when its stamp moved', async () => {
    const volume = new FakeVolume();
    const watchers = new StateWatchers({
      signals: createLocalStateSignals(),
      read: volume.read,
      stamp: volume.stamp,
      fallbackMs: 30,
    });
    const scan = randomUUID();
    volume.set(scan, record(scan, 'running', 1));
    const listener = new Listener();
    const stop = watchers.watch(scan, listener.on, true);
    expect(await listener.count(1)).toBe(1);
    expect(volume.reads).toBe(1);
    // Idle: tick after tick looks at the stamp and reads nothing.
    for (let i = 0; i < 200 && volume.stamps < 4; i++) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(volume.stamps).toBeGreaterThanOrEqual(4);
    expect(volume.reads).toBe(1);
    expect(listener.readings).toHaveLength(1);
    // A write whose signal was lost moves the stamp: the next tick reads it.
    volume.set(scan, record(scan, 'running', 2));
    expect(await listener.count(2)).toBe(2);
    expect(volume.reads).toBe(2);
    expect(listener.readings[1]?.record?.progress.files_done).toBe(2);
    stop();
  });

  it('one sweep a period looks at each idle watched scan once, and passes by a scan a signal has just read', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      const signals = createLocalStateSignals();
      const volume = new FakeVolume();
      const watchers = new StateWatchers({ signals, read: volume.read, stamp: volume.stamp, fallbackMs: 1_000 });
      const scans = [randomUUID(), randomUUID(), randomUUID()];
      for (const id of scans) volume.set(id, record(id, 'queued'));
      const stops = scans.map((id) => watchers.watch(id, () => {}));
      expect(vi.getTimerCount()).toBe(1);
      await vi.advanceTimersByTimeAsync(1_000);
      expect({ stamps: volume.stamps, reads: volume.reads }).toEqual({ stamps: 3, reads: 3 });
      await vi.advanceTimersByTimeAsync(1_000);
      expect({ stamps: volume.stamps, reads: volume.reads }).toEqual({ stamps: 6, reads: 3 });
      signals.announce(scans[0] as string);
      await vi.advanceTimersByTimeAsync(0);
      expect({ stamps: volume.stamps, reads: volume.reads }).toEqual({ stamps: 7, reads: 4 });
      await vi.advanceTimersByTimeAsync(1_000);
      expect({ stamps: volume.stamps, reads: volume.reads }).toEqual({ stamps: 9, reads: 4 });
      await vi.advanceTimersByTimeAsync(1_000);
      expect({ stamps: volume.stamps, reads: volume.reads }).toEqual({ stamps: 12, reads: 4 });
      for (const stop of stops) stop();
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it('without signals the fallback alone brings every change', async () => {
    const volume = new FakeVolume();
    const watchers = new StateWatchers({ read: volume.read, fallbackMs: 50 });
    const scan = randomUUID();
    volume.states.set(scan, record(scan, 'completed'));
    const listener = new Listener();
    const stop = watchers.watch(scan, listener.on);
    expect(await listener.count(1)).toBeGreaterThanOrEqual(1);
    expect(listener.states()[0]).toBe('completed');
    stop();
  });

  it('a failed read is handed on as an error and the next signal reads again', async () => {
    const signals = createLocalStateSignals();
    const volume = new FakeVolume();
    const watchers = new StateWatchers({ signals, read: volume.read, fallbackMs: HOUR });
    const scan = randomUUID();
    volume.states.set(scan, record(scan, 'running'));
    const listener = new Listener();
    const stop = watchers.watch(scan, listener.on);
    volume.failNext = new Error('EMFILE');
    signals.announce(scan);
    expect(await listener.count(1)).toBe(1);
    signals.announce(scan);
    expect(await listener.count(2)).toBe(2);
    expect(listener.states()).toEqual(['error', 'running']);
    expect(listener.readings[0]?.error?.message).toBe('EMFILE');
    stop();
  });

  it('a scan that is gone reads as null', async () => {
    const volume = new FakeVolume();
    const watchers = new StateWatchers({ signals: createLocalStateSignals(), read: volume.read, fallbackMs: HOUR });
    const listener = new Listener();
    const stop = watchers.watch(randomUUID(), listener.on, true);
    expect(await listener.count(1)).toBe(1);
    expect(listener.states()).toEqual(['gone']);
    stop();
  });

  it('once the last waiter leaves, signals read nothing and the next waiter gets a watcher of its own', async () => {
    const signals = countingSignals();
    const volume = new FakeVolume();
    const watchers = new StateWatchers({ signals, read: volume.read, fallbackMs: HOUR });
    const scan = randomUUID();
    volume.states.set(scan, record(scan, 'queued'));
    const first = new Listener();
    watchers.watch(scan, first.on)();
    expect(watchers.size).toBe(0);
    signals.announce(scan);
    await settle();
    expect(volume.reads).toBe(0);

    const second = new Listener();
    const stop = watchers.watch(scan, second.on);
    expect(signals.listening()).toBe(1);
    signals.announce(scan);
    expect(await second.count(1)).toBe(1);
    expect(first.readings).toEqual([]);
    stop();
  });
});
