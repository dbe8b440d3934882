import type { ScanStateRecord } from '@reposcan/contracts';
import type { StateSignals } from '@reposcan/queue';

/**
 * One read of a scan's state, as every subscriber of its watcher gets it: the record, null when
 * the scan is gone, or the error the read failed with (record null). Shared by all subscribers:
 * never mutate it.
 */
export type StateListener = (record: ScanStateRecord | null, error?: Error) => void;

export interface StateWatchersOptions {
  signals?: StateSignals | undefined;
  read: (scanId: string) => Promise<ScanStateRecord | null>;
  /**
   * A cheap token that changes whenever the state does (null: no state). With it, a fallback tick
   * reads the state only when the token moved since the last read; without, it always reads.
   */
  stamp?: (scanId: string) => Promise<string | null>;
  /** The period of the fallback sweep (a signal can be lost). */
  fallbackMs: number;
  /** Told of every read (metrics). */
  onRead?: () => void;
}

interface Subscriber {
  listener: StateListener;
  /** The watcher's read count when it subscribed: only reads started later reach it. */
  since: number;
}

/**
 * One watcher per watched scan, shared by everyone waiting on it (event streams, waiting POSTs):
 * it hears the scan's state signal once, reads state.json once per signal and hands that one
 * reading to every subscriber. Idle waiters cost no reads of their own; a hundred streams on one
 * scan cost what one does.
 *
 * A signal can be lost, so one timer for all watchers sweeps every `fallbackMs`: each watcher not
 * looked at since the sweep before stats its state and reads it only if that moved. A change whose
 * signal was lost is seen within one to two periods. One timer and one burst of stats, rather than
 * a timer per scan firing on its own, keeps thousands of idle watchers to a few wakeups.
 */
export class StateWatchers {
  private readonly watchers = new Map<string, ScanWatcher>();
  private sweeper: NodeJS.Timeout | null = null;

  constructor(private readonly options: StateWatchersOptions) {}

  /**
   * Calls `listener` with every reading of `scanId`'s state started from now on, in order, until
   * the returned function is called. `readNow` asks for a reading at once (the state now);
   * otherwise the first comes with the next change or fallback sweep.
   */
  watch(scanId: string, listener: StateListener, readNow = false): () => void {
    let watcher = this.watchers.get(scanId);
    if (!watcher) {
      const created: ScanWatcher = new ScanWatcher(scanId, this.options, () => {
        if (this.watchers.get(scanId) === created) this.watchers.delete(scanId);
        if (this.watchers.size === 0 && this.sweeper) {
          clearInterval(this.sweeper);
          this.sweeper = null;
        }
      });
      this.watchers.set(scanId, (watcher = created));
      if (!this.sweeper) {
        this.sweeper = setInterval(() => {
          for (const w of this.watchers.values()) w.sweep();
        }, this.options.fallbackMs);
        this.sweeper.unref();
      }
    }
    return watcher.add(listener, readNow);
  }

  /** Scans watched now. */
  get size(): number {
    return this.watchers.size;
  }
}

class ScanWatcher {
  private readonly subscribers = new Set<Subscriber>();
  private readonly unlisten: () => void;
  /** Read in full since the last sweep (a signal, a new subscriber): that sweep may pass it by. */
  private readSinceSweep = false;
  /** Reads started so far. */
  private reads = 0;
  private reading = false;
  /** Asked to read while a read was under way: read once more after it. */
  private again = false;
  /** The next read is wanted in full (a signal, a new subscriber), not only if the stamp moved. */
  private full = false;
  /** The stamp taken before the last full read; null: unknown, read in full. */
  private stamp: string | null = null;

  constructor(
    private readonly scanId: string,
    private readonly options: StateWatchersOptions,
    private readonly onIdle: () => void,
  ) {
    this.unlisten = options.signals?.listen(scanId, () => this.refresh(true)) ?? (() => {});
  }

  /** The fallback: a scan whose signals arrive is not looked at for it too. */
  sweep(): void {
    if (this.readSinceSweep) this.readSinceSweep = false;
    else this.refresh(false);
  }

  add(listener: StateListener, readNow: boolean): () => void {
    const subscriber: Subscriber = { listener, since: this.reads };
    this.subscribers.add(subscriber);
    if (readNow) this.refresh(true);
    return () => {
      if (!this.subscribers.delete(subscriber) || this.subscribers.size > 0) return;
      this.unlisten();
      this.onIdle();
    };
  }

  private refresh(full: boolean): void {
    this.full ||= full;
    if (this.reading) this.again = true;
    else void this.readLoop();
  }

  private async readLoop(): Promise<void> {
    this.reading = true;
    do {
      const full = this.full;
      this.again = false;
      this.full = false;
      const read = ++this.reads;
      this.readSinceSweep ||= full;
      // Taken before the read: a write between the two makes the next tick read again, never miss it.
      const stamp = await this.stampNow();
      if (!full && stamp !== null && stamp === this.stamp) continue;
      this.stamp = stamp;
      let record: ScanStateRecord | null = null;
      let error: Error | undefined;
      try {
        this.options.onRead?.();
        record = await this.options.read(this.scanId);
      } catch (caught) {
        error = caught instanceof Error ? caught : new Error(`state read failed: ${String(caught)}`);
        this.stamp = null;
      }
      // A subscriber may leave (or another join) from inside a listener.
      for (const s of [...this.subscribers]) if (s.since < read && this.subscribers.has(s)) s.listener(record, error);
    } while (this.again && this.subscribers.size > 0);
    this.reading = false;
  }

  /** null when there is no stamp to go by (none given, no state, or it failed): read in full. */
  private async stampNow(): Promise<string | null> {
    if (!this.options.stamp) return null;
    try {
      return await this.options.stamp(this.scanId);
    } catch {
      return null;
    }
  }
}
