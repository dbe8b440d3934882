// One block of shared memory that reads land in, handed out and given back in FIFO order, which is
// the order batches are processed and emitted in. Read buffers that were allocated per file or per
// batch and dropped stayed allocated until V8 happened to collect them (it does not collect
// shared memory under pressure), so a scan held several times what it had in flight; the ring
// holds a fixed amount and makes no garbage.

export interface RingRegion {
  readonly start: number;
  readonly end: number;
}

export class ReadRing {
  readonly memory: SharedArrayBuffer;
  /** Live regions, oldest first. */
  private readonly live: RingRegion[] = [];
  /** Where the next region starts. */
  private head = 0;

  constructor(readonly capacity: number) {
    this.memory = new SharedArrayBuffer(capacity);
  }

  /** A region of `bytes` after the live ones, or null until older regions are released. */
  tryAcquire(bytes: number): RingRegion | null {
    if (bytes > this.capacity)
      throw new RangeError(`A region of ${bytes} bytes does not fit a ring of ${this.capacity}`);
    const oldest = this.live[0];
    let start: number;
    if (oldest === undefined) start = 0;
    else if (this.head > oldest.start) {
      // Free space is [head, capacity) and, wrapping around, [0, oldest.start).
      if (this.capacity - this.head >= bytes) start = this.head;
      else if (oldest.start >= bytes) start = 0;
      else return null;
    } else if (oldest.start - this.head >= bytes) start = this.head;
    else return null;
    const region = { start, end: start + bytes };
    this.live.push(region);
    this.head = region.end;
    return region;
  }

  hasLive(): boolean {
    return this.live.length > 0;
  }

  /** Gives back the oldest live region. */
  releaseOldest(): void {
    this.live.shift();
    if (this.live.length === 0) this.head = 0;
  }
}

/** Rings of finished scans, reused by the next ones in this thread. */
const idle: ReadRing[] = [];
const KEEP_IDLE = 4;

/** A ring of at least `capacity` bytes: an idle one when there is one, else a new one. */
export function takeRing(capacity: number): ReadRing {
  const fit = idle.findIndex((ring) => ring.capacity >= capacity);
  return fit === -1 ? new ReadRing(capacity) : (idle.splice(fit, 1)[0] as ReadRing);
}

/** Gives a ring with no live region back for reuse. */
export function returnRing(ring: ReadRing): void {
  while (ring.hasLive()) ring.releaseOldest();
  if (idle.length < KEEP_IDLE) idle.push(ring);
}
