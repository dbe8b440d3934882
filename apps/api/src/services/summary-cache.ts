/** A published summary as served, with what a repeat request checks it against. */
export interface KeptSummary {
  /** The identity of the scan's folder when it was read: a different one means read again. */
  folder: string;
  json: string;
  owner?: string;
}

/**
 * The summaries of the last scans read, most recently read kept, bounded by their length: a
 * summary lists every file (about 1.2 MB for 9 000 files, 10 MB for 50 000), so a count of
 * entries alone would not bound the memory. One longer than the bound is served but not kept.
 */
export class SummaryCache {
  private readonly entries = new Map<string, KeptSummary>();
  private chars = 0;

  constructor(private readonly maxChars = 64 << 20) {}

  /** The kept summary of `scanId`, now the most recently read. */
  get(scanId: string): KeptSummary | undefined {
    const entry = this.entries.get(scanId);
    if (entry === undefined) return undefined;
    this.entries.delete(scanId);
    this.entries.set(scanId, entry);
    return entry;
  }

  set(scanId: string, entry: KeptSummary): void {
    this.delete(scanId);
    if (entry.json.length > this.maxChars) return;
    this.entries.set(scanId, entry);
    this.chars += entry.json.length;
    for (const [key, kept] of this.entries) {
      if (this.chars <= this.maxChars) break;
      this.entries.delete(key);
      this.chars -= kept.json.length;
    }
  }

  delete(scanId: string): void {
    const entry = this.entries.get(scanId);
    if (entry === undefined) return;
    this.entries.delete(scanId);
    this.chars -= entry.json.length;
  }

  /** Characters of JSON kept. */
  get size(): number {
    return this.chars;
  }
}
