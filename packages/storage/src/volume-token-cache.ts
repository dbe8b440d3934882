import { hash, randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { TOKEN_KEY_BYTES, TokenTable } from '@reposcan/core';
import type { TokenCache } from '@reposcan/core';
import { hasCode } from './has-code.js';

// The token cache on the shared volume: one folder per encoding, holding immutable segment
// files. A scan appends one segment with the counts it learnt and the ones it used (so recent
// entries survive compaction); every worker loads the segments it has not seen yet. Segments
// appear by rename and are never changed, so any number of processes share the folder without
// locks; two compactions at once only leave duplicates for the next one.
//
// Segment: "RSTOKC01" · records of 16-byte key + u32 LE count · 16-byte SHA-256 prefix of the records.

const MAGIC = Buffer.from('RSTOKC01', 'latin1');
const RECORD_BYTES = TOKEN_KEY_BYTES + 4;
const CHECK_BYTES = 16;
const SEGMENT = /^(\d{15})-[0-9a-f]{12}\.seg$/;
const TEMP_PREFIX = '.tmp-';
/** A temporary or unreadable file this old is debris of a crash, not a write in progress. */
const DEBRIS_AGE_MS = 60 * 60 * 1000;

function segmentName(timestamp: string = String(Date.now()).padStart(15, '0')): string {
  return `${timestamp}-${randomBytes(6).toString('hex')}.seg`;
}

/** The records of a whole, intact segment, or null. */
function recordsOf(file: Buffer): Buffer | null {
  if (file.length < MAGIC.length + CHECK_BYTES || !file.subarray(0, MAGIC.length).equals(MAGIC)) return null;
  const records = file.subarray(MAGIC.length, file.length - CHECK_BYTES);
  if (records.length % RECORD_BYTES !== 0) return null;
  return hash('sha256', records, 'buffer')
    .subarray(0, CHECK_BYTES)
    .equals(file.subarray(file.length - CHECK_BYTES))
    ? records
    : null;
}

async function readSegment(path: string): Promise<Buffer | null> {
  try {
    return recordsOf(await readFile(path));
  } catch (error) {
    if (hasCode(error, 'ENOENT')) return null; // compacted away meanwhile: its entries are in the merged segment
    throw error;
  }
}

/** Writes records as a new segment, visible all at once. */
async function writeSegment(dir: string, records: Buffer, timestamp?: string): Promise<string> {
  const name = segmentName(timestamp);
  const temp = join(dir, `${TEMP_PREFIX}${name}`);
  await writeFile(temp, Buffer.concat([MAGIC, records, hash('sha256', records, 'buffer').subarray(0, CHECK_BYTES)]));
  await rename(temp, join(dir, name));
  return name;
}

async function segmentNames(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((name) => SEGMENT.test(name)).sort();
}

export interface VolumeTokenCacheOptions {
  /** Entries kept in memory and, after compaction, on disk. */
  maxEntries: number;
}

/** A TokenCache over one encoding's folder. `sync` before a scan, `flush` after it. */
export class VolumeTokenCache implements TokenCache {
  private table = new TokenTable();
  private readonly loaded = new Set<string>();
  private pending: Buffer[] = [];

  private constructor(
    readonly dir: string,
    private readonly options: VolumeTokenCacheOptions,
  ) {}

  static async open(dir: string, options: VolumeTokenCacheOptions): Promise<VolumeTokenCache> {
    await mkdir(dir, { recursive: true });
    return new VolumeTokenCache(dir, options);
  }

  get size(): number {
    return this.table.size;
  }

  /** Loads the segments written since the last sync, newest first, up to `maxEntries`. */
  async sync(): Promise<void> {
    if (this.table.size > this.options.maxEntries) {
      // Compaction dropped old entries on disk; start again from what the folder holds now.
      this.table = new TokenTable();
      this.loaded.clear();
    }
    const fresh = (await segmentNames(this.dir)).filter((name) => !this.loaded.has(name)).reverse();
    for (const name of fresh) {
      this.loaded.add(name);
      if (this.table.size >= this.options.maxEntries) continue;
      const records = await readSegment(join(this.dir, name));
      if (!records) continue;
      for (let at = 0; at < records.length && this.table.size < this.options.maxEntries; at += RECORD_BYTES) {
        if (!this.table.has(records, at)) this.table.set(records, records.readUInt32LE(at + TOKEN_KEY_BYTES), at);
      }
    }
  }

  get(key: Uint8Array): number | undefined {
    const tokens = this.table.get(key);
    if (tokens !== undefined) this.remember(key, tokens);
    return tokens;
  }

  set(key: Uint8Array, tokens: number): void {
    this.table.set(key, tokens);
    this.remember(key, tokens);
  }

  /** Writes what this process learnt and used since the last flush as one segment. */
  async flush(): Promise<void> {
    if (this.pending.length === 0) return;
    const records = Buffer.concat(this.pending);
    this.pending = [];
    this.loaded.add(await writeSegment(this.dir, records));
  }

  private remember(key: Uint8Array, tokens: number): void {
    if (tokens < 0 || tokens >= 0xffff_ffff) return;
    const record = Buffer.allocUnsafe(RECORD_BYTES);
    record.set(key.subarray(0, TOKEN_KEY_BYTES));
    record.writeUInt32LE(tokens, TOKEN_KEY_BYTES);
    this.pending.push(record);
  }
}

export interface CompactionReport {
  segmentsMerged: number;
  entriesKept: number;
  debrisRemoved: number;
}

/**
 * Merges a cache folder's segments into one when there are more than `maxSegments` or more
 * records than `maxEntries`, keeping the most recently written `maxEntries` distinct keys, and
 * removes crash debris. Returns null when nothing needed doing.
 */
export async function compactTokenCache(
  dir: string,
  options: { maxEntries: number; maxSegments?: number; now?: number },
): Promise<CompactionReport | null> {
  let names: string[];
  try {
    names = await segmentNames(dir);
  } catch (error) {
    if (hasCode(error, 'ENOENT')) return null; // no scan has written this encoding's cache yet
    throw error;
  }
  const now = options.now ?? Date.now();
  let debrisRemoved = 0;
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    if (!name.startsWith(TEMP_PREFIX)) continue;
    const info = await stat(join(dir, name)).catch(() => null);
    if (info && now - info.mtimeMs > DEBRIS_AGE_MS) {
      await rm(join(dir, name), { force: true });
      debrisRemoved++;
    }
  }
  let records = 0;
  for (const name of names)
    records +=
      Math.max(0, ((await stat(join(dir, name)).catch(() => null))?.size ?? 0) - MAGIC.length - CHECK_BYTES) /
      RECORD_BYTES;
  if (names.length <= (options.maxSegments ?? 16) && records <= options.maxEntries)
    return debrisRemoved > 0 ? { segmentsMerged: 0, entriesKept: 0, debrisRemoved } : null;

  const merged = new TokenTable(Math.min(records, options.maxEntries));
  const newestFirst = [...names].reverse();
  for (const name of newestFirst) {
    if (merged.size >= options.maxEntries) break;
    const segment = await readSegment(join(dir, name));
    if (!segment) continue;
    for (let at = 0; at < segment.length && merged.size < options.maxEntries; at += RECORD_BYTES) {
      if (!merged.has(segment, at)) merged.set(segment, segment.readUInt32LE(at + TOKEN_KEY_BYTES), at);
    }
  }
  const out = Buffer.allocUnsafe(merged.size * RECORD_BYTES);
  let at = 0;
  for (const [key, tokens] of merged.entries()) {
    out.set(key, at);
    out.writeUInt32LE(tokens, at + TOKEN_KEY_BYTES);
    at += RECORD_BYTES;
  }
  // Named after the newest input, so segments written meanwhile still count as newer.
  const newest = SEGMENT.exec(newestFirst[0] as string)?.[1];
  await writeSegment(dir, out, newest);
  for (const name of names) await rm(join(dir, name), { force: true });
  return { segmentsMerged: names.length, entriesKept: merged.size, debrisRemoved };
}
