import { Buffer } from 'node:buffer';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTokenCounter } from '../../src/tokens/index.js';
import { runScan } from '../../src/scan/run-scan.js';
import type { AbsentFileReader } from '../../src/scan/absent-file-reader.js';
import type { ReadOutcome } from '../../src/io/read-file-bytes.js';
import { readFilesSync } from '../../src/io/read-file-bytes.js';
import { IGNORE_FILE_NAMES } from '../../src/walk/ignore-file-names.js';
import { makeSampleTree, sampleScanInput } from './fixture-tree.js';

const counter = createTokenCounter('o200k_base');
const countInThread = (contents: Uint8Array[]): Promise<number[]> =>
  Promise.resolve(contents.map((c) => counter.count(Buffer.from(c).toString('utf8'))));

/** Files kept in memory, as a clone's object store keeps them: what the scan reads instead of the disk. */
class MemoryFiles implements AbsentFileReader {
  readonly asked: string[] = [];
  intoUsed = 0;
  constructor(readonly files: Map<string, Buffer>) {}
  has(path: string): boolean {
    return this.files.has(path);
  }
  read(files: readonly { path: string; into?: Uint8Array }[], maxBytes: number): Promise<ReadOutcome[]> {
    return Promise.resolve(
      files.map(({ path, into }): ReadOutcome => {
        this.asked.push(path);
        const bytes = this.files.get(path) as Buffer;
        if (bytes.length > maxBytes) return { ok: false, reason: 'too_large' };
        if (into === undefined || into.length < bytes.length) throw new Error(`no room given for ${path}`);
        this.intoUsed++;
        into.set(bytes);
        return { ok: true, bytes: into.subarray(0, bytes.length) };
      }),
    );
  }
}

describe('a scan whose files are not on disk but held by a reader (readAbsent)', () => {
  let tree: Awaited<ReturnType<typeof makeSampleTree>>;
  let secondOut: string;

  beforeAll(async () => {
    tree = await makeSampleTree();
    secondOut = await mkdtemp(join(tmpdir(), 'reposcan-absent-out-'));
  });
  afterAll(async () => {
    await tree.cleanup();
    await rm(secondOut, { recursive: true, force: true });
  });

  it('reads them from the reader, never from disk, and writes what a scan of the files on disk writes', async () => {
    const first = await runScan(sampleScanInput(tree.root, tree.outDir, { secrets: 'redact' }), {
      countTokens: countInThread,
    });
    // Every textual file but the ignore files (the walk reads those itself) leaves the disk.
    const moved = first.files.map((f) => f.path).filter((path) => !IGNORE_FILE_NAMES.includes(basename(path)));
    expect(moved.length).toBeGreaterThan(5);
    const held = new Map<string, Buffer>();
    for (const path of moved) {
      held.set(path, await readFile(join(tree.root, path)));
      await rm(join(tree.root, path));
    }
    const reader = new MemoryFiles(held);
    const fromDisk: string[] = [];
    const second = await runScan(
      {
        ...sampleScanInput(tree.root, secondOut, { secrets: 'redact' }),
        absent: new Map([...held].map(([path, bytes]) => [path, bytes.length])),
      },
      {
        countTokens: countInThread,
        readAbsent: reader,
        readFiles: (requests, maxBytes) => {
          for (const request of requests) fromDisk.push(String(request.absPath));
          return Promise.resolve(readFilesSync(requests, maxBytes));
        },
      },
    );
    expect(reader.asked.sort()).toEqual([...moved].sort());
    expect(reader.intoUsed).toBe(moved.length);
    for (const path of moved) expect(fromDisk.some((read) => read.endsWith(path))).toBe(false);
    expect(second.files).toEqual(first.files);
    for (const name of ['output.txt', 'output.md', 'output.json'])
      expect((await readFile(join(secondOut, name))).equals(await readFile(join(tree.outDir, name))), name).toBe(true);
  });
});
