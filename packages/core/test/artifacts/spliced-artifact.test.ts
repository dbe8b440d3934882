import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import { mkdtemp, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  appendRange,
  DamagedSpliceError,
  hashOutput,
  openOutput,
  parseSplice,
  rangeSource,
  rangesOf,
} from '../../src/artifacts/spliced-artifact.js';
import type { Splice } from '../../src/artifacts/spliced-artifact.js';

describe('spliced outputs', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'reposcan-splice-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** Two pieces of distinct bytes, and an output made of stretches of both, described beside them. */
  async function spliced(): Promise<{ path: string; expected: Buffer }> {
    const own = Buffer.from('HEAD|link-1|link-2|TAIL');
    const earlier = Buffer.alloc(3 << 20);
    for (let i = 0; i < earlier.length; i++) earlier[i] = (i * 7) & 0xff;
    await writeFile(join(dir, 'output.txt.piece-0'), own);
    await writeFile(join(dir, 'output.txt.piece-1'), earlier);
    const ranges: number[] = [];
    // Short ranges inside one window, and one longer than a window.
    const parts: Array<[number, number, number]> = [
      [0, 0, 5],
      [1, 10, 1000],
      [0, 5, 7],
      [1, 2000, (2 << 20) + 5],
      [0, 12, 7],
      [1, 3 << 19, 10],
      [0, 19, 4],
    ];
    for (const [piece, start, length] of parts) appendRange(ranges, piece, start, length);
    const expected = Buffer.concat(parts.map(([p, s, n]) => (p === 0 ? own : earlier).subarray(s, s + n)));
    const splice: Splice = {
      format: 1,
      bytes: expected.length,
      pieces: ['output.txt.piece-0', 'output.txt.piece-1'],
      ranges,
    };
    await writeFile(join(dir, 'output.txt.splice'), JSON.stringify(splice));
    return { path: join(dir, 'output.txt'), expected };
  }

  it('reads as the bytes its ranges name, from any position, and hashes as they do', async () => {
    const { path, expected } = await spliced();
    const output = await openOutput(path);
    try {
      expect(output.size).toBe(expected.length);
      for (const [position, length] of [
        [0, expected.length],
        [3, 10],
        [1004, 9],
        [expected.length - 6, 100],
        [1 << 20, 1 << 20],
      ] as const) {
        const into = Buffer.alloc(length);
        const n = await output.read(into, position);
        expect(n).toBe(Math.min(length, expected.length - position));
        expect(into.subarray(0, n).equals(expected.subarray(position, position + n))).toBe(true);
      }
      expect(await output.read(Buffer.alloc(10), expected.length)).toBe(0);
    } finally {
      await output.close();
    }
    expect(await hashOutput(path)).toBe(createHash('sha256').update(expected).digest('hex'));
  });

  it('keeps reading what it opened after its folder is removed', async () => {
    const { path, expected } = await spliced();
    const output = await openOutput(path);
    await rm(dir, { recursive: true });
    const into = Buffer.alloc(expected.length);
    expect(await output.read(into, 0)).toBe(expected.length);
    expect(into.equals(expected)).toBe(true);
    await output.close();
  });

  it('says so when a piece is shorter than its ranges', async () => {
    const { path } = await spliced();
    await truncate(join(dir, 'output.txt.piece-1'), 1 << 20);
    await expect(hashOutput(path)).rejects.toBeInstanceOf(DamagedSpliceError);
  });

  it('refuses a description naming files other than its own pieces, or lengths that do not add up', () => {
    const valid = { format: 1, bytes: 3, pieces: ['output.md.piece-0'], ranges: [0, 0, 3] };
    expect(parseSplice(JSON.stringify(valid), 'output.md').bytes).toBe(3);
    for (const pieces of [['../output.md.piece-0'], ['output.txt.piece-0'], ['output.md.piece-01'], ['summary.json']])
      expect(() => parseSplice(JSON.stringify({ ...valid, pieces }), 'output.md')).toThrow(/not a valid/);
    for (const ranges of [
      [0, 0, 2],
      [1, 0, 3],
      [0, -1, 3],
      [0, 0],
    ])
      expect(() => parseSplice(JSON.stringify({ ...valid, ranges }), 'output.md')).toThrow(/not a valid/);
  });

  it('names the ranges of a stretch of an earlier output, spliced or one file, joining neighbours', async () => {
    const { path, expected } = await spliced();
    const output = await openOutput(path);
    try {
      const into: number[] = [];
      // Bytes 3 to 1010 of the output: the end of the head, the first earlier range, a link's start.
      rangesOf(rangeSource(output), 3, 1010, (n) => n + 1, into);
      expect(into).toEqual([1, 3, 2, 2, 10, 1000, 1, 5, 5]);
      const tail: number[] = [];
      expect(() => rangesOf(rangeSource(output), 0, expected.length + 1, (n) => n, tail)).toThrow(DamagedSpliceError);
      const file: number[] = [];
      rangesOf({ splice: null, size: 100 }, 10, 20, () => 7, file);
      rangesOf({ splice: null, size: 100 }, 20, 30, () => 7, file);
      expect(file).toEqual([7, 10, 20]);
    } finally {
      await output.close();
    }
  });
});
