import { Buffer } from 'node:buffer';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTokenCounter } from '../../src/tokens/index.js';
import { runScan } from '../../src/scan/run-scan.js';
import type { ScanInput } from '../../src/scan/run-scan.js';
import type { FileReuse, FoundText, FreshText, StoredText } from '../../src/scan/file-reuse.js';
import { readFilesSync } from '../../src/io/read-file-bytes.js';
import { IGNORE_FILE_NAMES } from '../../src/walk/ignore-file-names.js';
import type { ScanOptions } from '../../src/types.js';
import { makeSampleTree, sampleScanInput } from './fixture-tree.js';

const counter = createTokenCounter('o200k_base');
const countInThread = (contents: Uint8Array[]): Promise<number[]> =>
  Promise.resolve(contents.map((c) => counter.count(Buffer.from(c).toString('utf8'))));

/** A FileReuse over memory: what the first scan learns, the second takes. */
class MemoryReuse implements FileReuse {
  readonly stored = new Map<string, { size: number; text: StoredText; content: Buffer }>();
  readonly learnt: string[] = [];
  readonly loaded: string[] = [];
  taking = false;

  find(path: string, size: number): FoundText | undefined {
    const entry = this.taking ? this.stored.get(path) : undefined;
    return entry?.size === size ? { ...entry.text, bytes: entry.content.length } : undefined;
  }
  load(paths: readonly string[], into: Uint8Array): Promise<Uint8Array[]> {
    this.loaded.push(...paths);
    let at = 0;
    return Promise.resolve(
      paths.map((path) => {
        const content = this.stored.get(path)?.content as Buffer;
        into.set(content, at);
        at += content.length;
        return into.subarray(at - content.length, at);
      }),
    );
  }
  learn(file: FreshText): void {
    const { path, size, content, ...text } = file;
    this.learnt.push(path);
    // The engine reuses its memory once learn returns: a keeper copies.
    this.stored.set(path, { size, text, content: Buffer.from(content) });
  }
}

describe('a scan with a FileReuse', () => {
  let tree: Awaited<ReturnType<typeof makeSampleTree>>;
  let secondOut: string;
  const reuse = new MemoryReuse();
  const reads: string[] = [];

  const input = (outDir: string, options: Partial<ScanOptions> = {}): ScanInput =>
    sampleScanInput(tree.root, outDir, options);
  const deps = {
    countTokens: countInThread,
    fileReuse: reuse,
    readFiles: (requests: Parameters<typeof readFilesSync>[0], maxBytes: number) => {
      for (const request of requests) reads.push(String(request.absPath));
      return Promise.resolve(readFilesSync(requests, maxBytes));
    },
  };

  beforeAll(async () => {
    tree = await makeSampleTree();
    secondOut = await mkdtemp(join(tmpdir(), 'reposcan-reuse-out-'));
  });
  afterAll(async () => {
    await tree.cleanup();
    await rm(secondOut, { recursive: true, force: true });
  });

  it('takes each stored file instead of reading it, and writes the same bytes as the scan that processed it', async () => {
    const first = await runScan(input(tree.outDir, { secrets: 'redact' }), deps);
    expect(reuse.learnt).toEqual(first.files.map((f) => f.path));
    expect(reuse.learnt.length).toBeGreaterThan(5);

    // Same sizes, other bytes: a file read again would show it. The walk reads ignore files
    // itself, so they are never stood in for (their placeholders would change what it keeps).
    const fresh = (path: string): boolean => path.startsWith('src/') || IGNORE_FILE_NAMES.includes(basename(path));
    const taken = reuse.learnt.filter(fresh);
    for (const path of taken) reuse.stored.delete(path);
    const kept = reuse.learnt.filter((path) => !fresh(path));
    for (const path of kept) {
      const size = (reuse.stored.get(path) as { size: number }).size;
      await writeFile(join(tree.root, path), 'Z'.repeat(size));
    }
    reuse.taking = true;
    reuse.learnt.length = 0;
    reads.length = 0;
    const second = await runScan(input(secondOut, { secrets: 'redact' }), deps);

    expect(reuse.loaded.sort()).toEqual([...kept].sort());
    // Only the files it had no stored outcome for were read, and only they were learnt.
    expect(reuse.learnt.sort()).toEqual([...taken].sort());
    for (const path of kept) expect(reads.some((read) => read.endsWith(path))).toBe(false);
    expect(second.files).toEqual(first.files);
    for (const name of ['output.txt', 'output.md', 'output.json'])
      expect((await readFile(join(secondOut, name))).equals(await readFile(join(tree.outDir, name))), name).toBe(true);
  });
});
