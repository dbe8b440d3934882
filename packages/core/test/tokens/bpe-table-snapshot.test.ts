// A table snapshot (what `npm run build` writes beside the built engine) reads back as the very
// tables buildBpeTables makes, counts alike, and is refused when it was made by other code or is cut short.
import { mkdtemp, rm, truncate, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BPE_ENGINE_URL,
  buildFromRankModule,
  createBpeCount,
  resolveRankModule,
  TABLE_NAMES,
} from '../../src/tokens/bpe-engine.js';
import { readTableSnapshot, writeTableSnapshot } from '../../src/tokens/bpe-table-snapshot.js';
import { wasmCounter } from '../../src/tokens/bpe-wasm.js';
import { TOKEN_ENCODINGS } from '@reposcan/contracts/vocabulary';

const SAMPLE = 'export const answer = (x: number): number => x * 2;\n// Grüße, 日本語, ½ ²\n    indented\r\n';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'reposcan-bpe-snapshot-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe.each(TOKEN_ENCODINGS)('table snapshot of %s', (encoding) => {
  const rankModule = resolveRankModule(encoding);

  it('reads back byte for byte and counts as the tables it was made from', () => {
    const built = buildFromRankModule(rankModule);
    const path = join(dir, `${encoding}.bpe-tables`);
    writeTableSnapshot(path, built, BPE_ENGINE_URL, rankModule);
    const read = readTableSnapshot(path, BPE_ENGINE_URL, rankModule);
    expect(read).not.toBeNull();
    const tables = read!;
    const view = (array: ArrayBufferView): Buffer => Buffer.from(array.buffer, array.byteOffset, array.byteLength);
    for (const name of TABLE_NAMES) {
      expect(tables[name].constructor).toBe(built[name].constructor);
      expect(view(tables[name]).equals(view(built[name])), name).toBe(true);
    }
    expect({ ...tables.offsets }).toEqual({ ...built.offsets });
    for (const key of ['pattern', 'mask', 'shortMask', 'maxTokenBytes'] as const) expect(tables[key]).toBe(built[key]);
    expect(tables.memory === null).toBe(built.memory === null);
    expect(createBpeCount(tables)(SAMPLE)).toBe(createBpeCount(built)(SAMPLE));
    const bytes = new TextEncoder().encode(SAMPLE);
    expect(wasmCounter(tables)?.countUtf8(bytes)).toBe(wasmCounter(built)?.countUtf8(bytes));
  });

  it('is refused when made by other code, cut short or missing', async () => {
    const path = join(dir, `${encoding}.bpe-tables`);
    const otherCode = pathToFileURL(join(import.meta.dirname, 'corpus.ts')).href;
    expect(readTableSnapshot(path, otherCode, rankModule)).toBeNull();
    await truncate(path, (await stat(path)).size - 1);
    expect(readTableSnapshot(path, BPE_ENGINE_URL, rankModule)).toBeNull();
    expect(readTableSnapshot(join(dir, 'none.bpe-tables'), BPE_ENGINE_URL, rankModule)).toBeNull();
  });
});
