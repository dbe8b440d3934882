import { Buffer } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { classifyByName, classifyContent } from '../../src/classify/index.js';
import { FileFeed } from '../../src/scan/file-feed.js';
import { processFiles } from '../../src/scan/process-files.js';
import type { FileProcessingDeps, ProcessOptions, ProcessedFile } from '../../src/scan/process-files.js';
import type { ReadOutcome } from '../../src/io/read-file-bytes.js';
import type { FileReuse } from '../../src/scan/file-reuse.js';
import type { WalkedFile } from '../../src/types.js';

/** The engine's batch reader over a single-file one: reads of a batch run concurrently here. */
const readEachFile =
  (
    readFile: (absPath: string, maxBytes: number, into?: Uint8Array) => Promise<ReadOutcome>,
  ): FileProcessingDeps['readFiles'] =>
  (requests, maxBytes) =>
    Promise.all(requests.map((request) => readFile(request.absPath, maxBytes, request.into)));
const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const text = (path: string, size: number): string =>
  `${path}:`.padEnd(size, String.fromCharCode(97 + (path.length % 26)));

/** Files of 1–6 kB whose contents say which file they are, read slowly and out of order. */
function fixture(count: number): {
  files: WalkedFile[];
  deps: FileProcessingDeps;
  reads: { live: number; peak: number };
} {
  const files = Array.from({ length: count }, (_, i) => {
    const path = `dir/file-${i}.txt`;
    return { path, absPath: `/virtual/${path}`, size: 1000 + ((i * 7919) % 5000) };
  });
  const bySpot = new Map(files.map((f) => [f.absPath, f]));
  const reads = { live: 0, peak: 0 };
  const deps: FileProcessingDeps = {
    readFiles: readEachFile(async (absPath, _maxBytes, into) => {
      const file = bySpot.get(absPath) as WalkedFile;
      if (!into) throw new Error('the engine reads into its ring');
      reads.live += into.length;
      reads.peak = Math.max(reads.peak, reads.live);
      await pause((file.size % 3) + 1);
      const bytes = Buffer.from(text(file.path, file.size));
      into.set(bytes);
      reads.live -= into.length;
      return { ok: true, bytes: into.subarray(0, bytes.length) };
    }),
    classifyByName,
    classifyContent,
    countTokens: async (contents) => {
      await pause(1);
      return contents.map((c) => c.length);
    },
  };
  return { files, deps, reads };
}

// A ring just big enough for a few batches, so freed regions are reused at once.
const TIGHT: ProcessOptions = {
  maxFileBytes: 8192,
  concurrency: 4,
  batchFiles: 4,
  batchBytes: 12_000,
  readBufferBytes: 24_000,
};

describe('processFiles', () => {
  it('emits every file in walk order, with contents intact until emit returns, through a tight read ring', async () => {
    const { files, deps, reads } = fixture(300);
    const seen: string[] = [];
    await processFiles(FileFeed.of(files), deps, TIGHT, async (items: ProcessedFile[]) => {
      const texts = items.map((item) => (item.kind === 'text' ? Buffer.from(item.content).toString() : ''));
      // While emit is busy (writing, in the engine), later batches are being read.
      await pause(3);
      items.forEach((item, i) => {
        expect(item.kind).toBe('text');
        if (item.kind !== 'text') return;
        expect(Buffer.from(item.content).toString(), item.file.path).toBe(texts[i]);
        expect(texts[i]).toBe(text(item.file.path, item.file.size));
        expect(item.tokens).toBe(item.file.size);
        seen.push(item.file.path);
      });
    });
    expect(seen).toEqual(files.map((f) => f.path));
    expect(reads.peak).toBeLessThanOrEqual(TIGHT.readBufferBytes);
  });

  it('loads stored texts into the read ring, intact until emit returns, and one longer than the ring apart', async () => {
    const { files, deps } = fixture(200);
    const storedText = (path: string, size: number): string =>
      // Longer than its file: a text decoded to UTF-8 or redacted can be. One is longer than the ring.
      path === 'dir/file-7.txt' ? `${path}:`.padEnd(30_000, 'é') : `stored ${text(path, size)}`;
    const loadedInto: ArrayBufferLike[] = [];
    const reuse: FileReuse = {
      find: (path, size) =>
        Number(/\d+/.exec(path)?.[0]) % 3 === 0
          ? undefined
          : {
              subcategory: 'docs',
              encoding: null,
              replacements: 0,
              tokens: size,
              secrets: null,
              compression: null,
              bytes: Buffer.byteLength(storedText(path, size)),
            },
      load: async (paths, into) => {
        loadedInto.push(into.buffer);
        await pause(2);
        let at = 0;
        return paths.map((path) => {
          const bytes = Buffer.from(storedText(path, (files.find((f) => f.path === path) as WalkedFile).size));
          into.set(bytes, at);
          at += bytes.length;
          return into.subarray(at - bytes.length, at);
        });
      },
    };
    const seen: string[] = [];
    await processFiles(FileFeed.of(files), { ...deps, reuse }, TIGHT, async (items: ProcessedFile[]) => {
      const texts = items.map((item) => (item.kind === 'text' ? Buffer.from(item.content).toString() : ''));
      await pause(3);
      items.forEach((item, i) => {
        if (item.kind !== 'text') throw new Error(`${item.file.path} is not a text`);
        expect(Buffer.from(item.content).toString(), item.file.path).toBe(texts[i]);
        const stored = reuse.find(item.file.path, item.file.size) !== undefined;
        expect(texts[i]).toBe(
          stored ? storedText(item.file.path, item.file.size) : text(item.file.path, item.file.size),
        );
        expect(item.reused === true).toBe(stored);
        seen.push(item.file.path);
      });
    });
    expect(seen).toEqual(files.map((f) => f.path));
    // Every batch but the one with the long text loaded into the ring's memory: one buffer for all.
    const ring = loadedInto[0];
    expect(loadedInto.filter((memory) => memory !== ring)).toHaveLength(1);
  });

  it('fails with the first error and lets the batches already reading finish', async () => {
    const { files, deps, reads } = fixture(60);
    const failing: FileProcessingDeps = {
      ...deps,
      countTokens: async (contents) => {
        await pause(1);
        if (contents.some((c) => Buffer.from(c).toString().startsWith('dir/file-20.txt:')))
          throw new Error('tokenizer crashed');
        return contents.map((c) => c.length);
      },
    };
    await expect(processFiles(FileFeed.of(files), failing, TIGHT, () => {})).rejects.toThrow('tokenizer crashed');
    expect(reads.live).toBe(0);
  });

  it('keeps starting batches while a slow one ahead of them is still counting, and still emits in order', async () => {
    const { files, deps } = fixture(200);
    const roomy: ProcessOptions = { ...TIGHT, readBufferBytes: 1 << 20 };
    let countedBehindHead = 0;
    let headDone = false;
    const slowHead: FileProcessingDeps = {
      ...deps,
      countTokens: async (contents) => {
        if (contents.some((c) => Buffer.from(c).toString().startsWith('dir/file-0.txt:'))) {
          // A big file at the head: it finishes once much later work is counted (or after 2 s).
          for (let waited = 0; countedBehindHead < 10 && waited < 2000; waited += 5) await pause(5);
          headDone = true;
        } else if (!headDone) countedBehindHead++;
        return contents.map((c) => c.length);
      },
    };
    const seen: string[] = [];
    await processFiles(FileFeed.of(files), slowHead, roomy, (items) => {
      for (const item of items) seen.push(item.file.path);
    });
    // Ten batches behind the head, with at most four batches counting at once.
    expect(countedBehindHead).toBeGreaterThanOrEqual(10);
    expect(seen).toEqual(files.map((f) => f.path));
  });

  it("starts on the first files of a walk still going, emits everything in order, and fails with the walk's error", async () => {
    const { files, deps } = fixture(120);
    const feed = new FileFeed();
    const emittedBeforeEnd: string[] = [];
    let ended = false;
    const seen: string[] = [];
    const walk = (async () => {
      // Chunks of 5 files, slower than the reads: batches go out part-filled rather than wait.
      for (let i = 0; i < files.length; i += 5) {
        feed.push(files.slice(i, i + 5));
        await pause(4);
      }
      ended = true;
      feed.end();
    })();
    await processFiles(feed, deps, TIGHT, (items) => {
      for (const item of items) {
        seen.push(item.file.path);
        if (!ended) emittedBeforeEnd.push(item.file.path);
      }
    });
    await walk;
    expect(seen).toEqual(files.map((f) => f.path));
    expect(emittedBeforeEnd.length).toBeGreaterThan(files.length / 2);

    const failing = new FileFeed();
    failing.push(files.slice(0, 10));
    setTimeout(() => failing.fail(new Error('walk failed: EACCES')), 20);
    await expect(processFiles(failing, deps, TIGHT, () => {})).rejects.toThrow('walk failed: EACCES');
  });

  it("reads and counts the next batches while an emit runs, never runs two emits at once, and fails with an emit's error", async () => {
    const { files, deps } = fixture(120);
    const roomy: ProcessOptions = { ...TIGHT, readBufferBytes: 1 << 20 };
    let counted = 0;
    const counting: FileProcessingDeps = {
      ...deps,
      countTokens: async (contents) => ((counted += contents.length), deps.countTokens(contents)),
    };
    let emitting = 0;
    let countedDuringFirstEmit = 0;
    const seen: string[] = [];
    await processFiles(FileFeed.of(files), counting, roomy, async (items) => {
      expect(emitting).toBe(0);
      emitting++;
      const texts = items.map((item) => (item.kind === 'text' ? Buffer.from(item.content).toString() : ''));
      if (seen.length === 0) {
        // The first emit waits (as for a busy artifact thread) until later batches are counted.
        const before = counted;
        for (let waited = 0; counted - before < 20 && waited < 2000; waited += 5) await pause(5);
        countedDuringFirstEmit = counted - before;
      }
      // Its contents are still intact at its end: its region is not reused while it runs.
      items.forEach((item, i) => item.kind === 'text' && expect(Buffer.from(item.content).toString()).toBe(texts[i]));
      for (const item of items) seen.push(item.file.path);
      emitting--;
    });
    expect(countedDuringFirstEmit).toBeGreaterThanOrEqual(20);
    expect(seen).toEqual(files.map((f) => f.path));

    let emits = 0;
    const { files: more, deps: moreDeps, reads } = fixture(60);
    await expect(
      processFiles(FileFeed.of(more), moreDeps, TIGHT, async () => {
        await pause(2);
        if (++emits === 3) throw new Error('disk full');
      }),
    ).rejects.toThrow('disk full');
    expect(emits).toBe(3);
    expect(reads.live).toBe(0);
  });
});
