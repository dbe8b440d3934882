/** Bytes of a content key: a 128-bit prefix of SHA-256, so a collision is out of reach at any cache size. */
export const TOKEN_KEY_BYTES = 16;
const WORDS = TOKEN_KEY_BYTES / 4;
const MIN_CAPACITY = 1024;

function word(bytes: Uint8Array, at: number): number {
  return (
    ((bytes[at] as number) |
      ((bytes[at + 1] as number) << 8) |
      ((bytes[at + 2] as number) << 16) |
      ((bytes[at + 3] as number) << 24)) >>>
    0
  );
}

/**
 * Content key → token count, in typed arrays (about 20–40 bytes an entry, no object per entry),
 * so a worker can hold a million counts without a garbage-collected Map of strings. Open
 * addressing with linear probing; keys are uniform hash bytes, so their first word is the slot.
 */
export class TokenTable {
  private keys: Uint32Array;
  /** tokens + 1; 0 marks an empty slot. */
  private values: Uint32Array;
  private mask: number;
  size = 0;

  constructor(expectedEntries = 0) {
    let capacity = MIN_CAPACITY;
    while (capacity < expectedEntries * 2) capacity *= 2;
    this.keys = new Uint32Array(capacity * WORDS);
    this.values = new Uint32Array(capacity);
    this.mask = capacity - 1;
  }

  /** The count stored for the key at `bytes[at..at+16)`. */
  get(bytes: Uint8Array, at = 0): number | undefined {
    const slot = this.find(bytes, at);
    const value = this.values[slot] as number;
    return value === 0 ? undefined : value - 1;
  }

  has(bytes: Uint8Array, at = 0): boolean {
    return this.values[this.find(bytes, at)] !== 0;
  }

  /** Stores (or replaces) the count of a key; counts above 2^32 − 2 are not stored. */
  set(bytes: Uint8Array, tokens: number, at = 0): void {
    if (!Number.isInteger(tokens) || tokens < 0 || tokens >= 0xffff_ffff) return;
    let slot = this.find(bytes, at);
    if (this.values[slot] === 0) {
      if ((this.size + 1) * 4 > (this.mask + 1) * 3) {
        this.grow();
        slot = this.find(bytes, at);
      }
      for (let w = 0; w < WORDS; w++) this.keys[slot * WORDS + w] = word(bytes, at + w * 4);
      this.size++;
    }
    this.values[slot] = tokens + 1;
  }

  /** Every entry as a key and its count; the key's memory is reused between calls. */
  *entries(): Generator<[Uint8Array, number]> {
    const key = new Uint8Array(TOKEN_KEY_BYTES);
    const view = new DataView(key.buffer);
    for (let slot = 0; slot <= this.mask; slot++) {
      const value = this.values[slot] as number;
      if (value === 0) continue;
      for (let w = 0; w < WORDS; w++) view.setUint32(w * 4, this.keys[slot * WORDS + w] as number, true);
      yield [key, value - 1];
    }
  }

  /** The slot holding the key, or the empty slot where it would go. */
  private find(bytes: Uint8Array, at: number): number {
    const w0 = word(bytes, at);
    const w1 = word(bytes, at + 4);
    const w2 = word(bytes, at + 8);
    const w3 = word(bytes, at + 12);
    const { keys, values, mask } = this;
    for (let slot = w0 & mask; ; slot = (slot + 1) & mask) {
      if (values[slot] === 0) return slot;
      const base = slot * WORDS;
      if (keys[base] === w0 && keys[base + 1] === w1 && keys[base + 2] === w2 && keys[base + 3] === w3) return slot;
    }
  }

  private grow(): void {
    const old = { keys: this.keys, values: this.values, capacity: this.mask + 1 };
    const capacity = old.capacity * 2;
    this.keys = new Uint32Array(capacity * WORDS);
    this.values = new Uint32Array(capacity);
    this.mask = capacity - 1;
    for (let slot = 0; slot < old.capacity; slot++) {
      const value = old.values[slot] as number;
      if (value === 0) continue;
      const base = slot * WORDS;
      let target = (old.keys[base] as number) & this.mask;
      while (this.values[target] !== 0) target = (target + 1) & this.mask;
      this.keys.set(old.keys.subarray(base, base + WORDS), target * WORDS);
      this.values[target] = value;
    }
  }
}
