// The built BPE tables of an encoding as one file beside the built code (`npm run build` writes them,
// scripts/bpe-tables.ts), read straight into the tables' shared memory: a few milliseconds where
// building them from js-tiktoken's ranks takes about 0.15 s of CPU in every process that counts.
// A snapshot is only a cache: it is used when its fingerprint matches the code that builds the
// tables, the rank module and this Node's Unicode version (the class bits come from its regular
// expressions), and the tables are built from the ranks as before when it does not.
import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import { closeSync, openSync, readFileSync, readSync, statSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { TokenEncodingName } from '../types.js';
import { allocateTables, BPE_ENGINE_URL, buildFromRankModule, resolveRankModule, TABLE_NAMES } from './bpe-engine.js';
import type { BpeTables, SplitPattern, TableName } from './bpe-engine.js';

interface SnapshotHeader {
  fingerprint: string;
  pattern: string;
  /** Derived from the pattern and this Node's Unicode version (both in the fingerprint), at a cost worth keeping. */
  split: SplitPattern;
  mask: number;
  shortMask: number;
  maxTokenBytes: number;
  /** Each table's byte length, in memory order: allocateTables lays them out again at `offsets`. */
  layout: Array<[TableName, number]>;
  offsets: Record<TableName, number>;
  /** Bytes of table memory stored, from its start. */
  stored: number;
}

/** The header's length (4 bytes, little-endian), the header as JSON, then the memory from this offset on. */
const BODY_ALIGN = 16;

export function snapshotPath(encoding: TokenEncodingName, dir: URL = new URL('.', import.meta.url)): string {
  return fileURLToPath(new URL(`${encoding}.bpe-tables`, dir));
}

/**
 * What the tables of `rankModule` depend on: the code that builds them (bpe-engine, given as
 * `engineUrl`) and this file's layout, the rank module (an encoding's ranks are fixed by its name;
 * the size guards against another file under it) and the Unicode version of this Node.
 */
function fingerprint(engineUrl: string, rankModule: string): string {
  const hash = createHash('sha256');
  hash.update(readFileSync(new URL(engineUrl)));
  hash.update(readFileSync(new URL(import.meta.url)));
  // The class bits come from the generated Unicode tables beside the engine.
  hash.update(readFileSync(new URL(engineUrl.replace(/bpe-engine(\.\w+)$/, 'unicode-classes$1'))));
  hash.update(`\0${statSync(rankModule).size}\0${process.versions.unicode ?? ''}`);
  return hash.digest('hex');
}

/** Writes `tables` (as buildBpeTables made them from `rankModule`) to `path`. */
export function writeTableSnapshot(path: string, tables: BpeTables, engineUrl: string, rankModule: string): void {
  const layout = [...TABLE_NAMES]
    .sort((a, b) => tables.offsets[a] - tables.offsets[b])
    .map((name): [TableName, number] => [name, tables[name].byteLength]);
  const stored = Math.max(...TABLE_NAMES.map((name) => tables.offsets[name] + tables[name].byteLength));
  const header: SnapshotHeader = {
    fingerprint: fingerprint(engineUrl, rankModule),
    pattern: tables.pattern,
    split: tables.split,
    mask: tables.mask,
    shortMask: tables.shortMask,
    maxTokenBytes: tables.maxTokenBytes,
    layout,
    offsets: tables.offsets,
    stored,
  };
  const json = Buffer.from(JSON.stringify(header));
  const bodyAt = alignUp(4 + json.length);
  const file = Buffer.alloc(bodyAt + stored);
  file.writeUInt32LE(json.length, 0);
  json.copy(file, 4);
  file.set(new Uint8Array(tables.bytes.buffer, 0, stored), bodyAt);
  writeFileSync(path, file);
}

/** The tables stored at `path`, or null when there is none or it was made by other code or data. */
export function readTableSnapshot(path: string, engineUrl: string, rankModule: string): BpeTables | null {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return null;
  }
  try {
    const size = Buffer.alloc(4);
    if (readSync(fd, size, 0, 4, 0) !== 4) return null;
    const json = Buffer.alloc(size.readUInt32LE(0));
    if (readSync(fd, json, 0, json.length, 4) !== json.length) return null;
    const header = JSON.parse(json.toString('utf8')) as SnapshotHeader;
    if (header.fingerprint !== fingerprint(engineUrl, rankModule)) return null;
    const { memory, buffer, offsets } = allocateTables(header.layout);
    if (TABLE_NAMES.some((name) => offsets[name] !== header.offsets[name])) return null;
    const body = new Uint8Array(buffer, 0, header.stored);
    let done = 0;
    const bodyAt = alignUp(4 + json.length);
    while (done < body.length) {
      const n = readSync(fd, body, done, body.length - done, bodyAt + done);
      if (n === 0) return null;
      done += n;
    }
    const bytes = Object.fromEntries(header.layout) as Record<TableName, number>;
    const u8 = (name: TableName) => new Uint8Array(buffer, offsets[name], bytes[name]);
    const i32 = (name: TableName) => new Int32Array(buffer, offsets[name], bytes[name] >> 2);
    return {
      pattern: header.pattern,
      split: header.split,
      bytes: u8('bytes'),
      start: i32('start'),
      length: new Uint16Array(buffer, offsets.length, bytes.length >> 1),
      slots: i32('slots'),
      mask: header.mask,
      pairRank: i32('pairRank'),
      maxTokenBytes: header.maxTokenBytes,
      shortSlots: i32('shortSlots'),
      shortMask: header.shortMask,
      shortFilter: i32('shortFilter'),
      classes: u8('classes'),
      memory,
      offsets,
    };
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/** Builds each encoding's tables from its ranks and writes them beside this module (`npm run build`). */
export function writeTableSnapshots(encodings: readonly TokenEncodingName[]): string[] {
  return encodings.map((encoding) => {
    const rankModule = resolveRankModule(encoding);
    const path = snapshotPath(encoding);
    writeTableSnapshot(path, buildFromRankModule(rankModule), BPE_ENGINE_URL, rankModule);
    return path;
  });
}

function alignUp(n: number): number {
  return Math.ceil(n / BODY_ALIGN) * BODY_ALIGN;
}
