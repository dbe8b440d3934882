import { createHash, randomBytes } from 'node:crypto';
import { appendFileSync, readdirSync, readFileSync, rmSync, truncateSync } from 'node:fs';
import { getPriority } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { IoThreads, KEEP_WALK_THREAD_UP_TO } from '../../src/io/io-threads.js';
import { createTokenPool } from '../../src/tokens/index.js';
import { DEFAULT_ENGINE_LIMITS, DEFAULT_SCAN_OPTIONS } from '../../src/types.js';
import type { WalkedFile, WalkResult } from '../../src/types.js';
import { walkTree, WalkTimeoutError } from '../../src/walk/index.js';
import type { WalkInput } from '../../src/walk/index.js';
import { ScanRootError } from '../../src/walk/scan-root.js';
import { useTempTrees } from '../walk/walk-fixture.js';

const tree = useTempTrees();
// One engine's io threads for the whole file, as a long-lived process keeps them.
const io = new IoThreads();
afterAll(() => io.close());
const { walk: walkInThread, readFiles: readFilesInThread } = io;
const input = (root: string, extra: Partial<WalkInput> = {}): WalkInput => ({
  root,
  subdir: null,
  options: DEFAULT_SCAN_OPTIONS,
  limits: DEFAULT_ENGINE_LIMITS,
  ...extra,
});

/** Nice values of this process's threads (Linux: field 19 of /proc/self/task/<tid>/stat). */
function threadNiceValues(): number[] {
  return readdirSync('/proc/self/task').map((tid) => {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  });
}

describe('io threads', () => {
  it('walk exactly as walkTree does on the calling thread, docs_only included, handing files on in chunks', async () => {
    const spec: Record<string, string> = {
      'README.md': '# hi',
      'src/a.ts': 'a',
      'src/b.ts': 'b',
      'docs/guide.md': 'g',
      '.gitignore': 'ignored.txt\n',
      'ignored.txt': 'x',
      'node_modules/x/index.js': 'x',
    };
    for (let i = 0; i < 600; i++) spec[`many/f${String(i).padStart(3, '0')}.ts`] = 'x';
    const root = await tree(spec);
    const inThread = async (extra: Partial<WalkInput> = {}): Promise<{ result: WalkResult; chunks: number }> => {
      const files: WalkedFile[] = [];
      let chunks = 0;
      const skipped = await walkInThread(input(root, extra), (chunk) => {
        chunks++;
        files.push(...chunk);
      });
      return { result: { files, skipped }, chunks };
    };
    const all = await inThread();
    expect(all.result).toEqual(await walkTree(input(root)));
    expect(all.chunks).toBeGreaterThan(1);
    const docs = await inThread({ docsOnly: true });
    expect(docs.result).toEqual(await walkTree(input(root, { docsOnly: true })));
    expect(docs.result.files.map((f) => f.path)).toEqual(['docs/guide.md', 'README.md']);
  });

  it('report a bad root as the ScanRootError walkTree throws, and refuse a filter function', async () => {
    const root = await tree({ 'file.txt': 'x' });
    const error = await walkInThread(input(join(root, 'file.txt')), () => {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ScanRootError);
    expect(error).toMatchObject({ code: 'ROOT_NOT_A_DIRECTORY' });
    await expect(walkInThread(input(root, { acceptFile: () => true }), () => {})).rejects.toThrow(/docsOnly/);
  });

  it("read a batch into the caller's shared memory, in request order, with the same refusals as a direct read", async () => {
    const root = await tree({
      'a.txt': 'alpha',
      'b.txt': 'bravo!',
      'big.txt': 'x'.repeat(100),
      'link.txt': { link: 'a.txt' },
    });
    const memory = new Uint8Array(new SharedArrayBuffer(64));
    const outcomes = await readFilesInThread(
      [
        { absPath: join(root, 'a.txt'), into: memory.subarray(0, 6) },
        { absPath: join(root, 'b.txt'), into: memory.subarray(6, 13) },
        { absPath: join(root, 'big.txt') },
        { absPath: join(root, 'link.txt') },
        { absPath: join(root, 'missing.txt') },
      ],
      50,
    );
    expect(outcomes.map((o) => (o.ok ? Buffer.from(o.bytes).toString() : o.reason))).toEqual([
      'alpha',
      'bravo!',
      'too_large',
      'symlink',
      'unreadable',
    ]);
    // The first two landed where the caller asked: in its shared memory, not in copies.
    expect(Buffer.from(memory.subarray(0, 5)).toString()).toBe('alpha');
    expect(Buffer.from(memory.subarray(6, 12)).toString()).toBe('bravo!');
  });

  it('hash files as they are appended to, each on one thread, reading back what was written', async () => {
    const root = await tree({ 'a.out': '', 'b.out': '', 'c.out': '' });
    const names = ['a.out', 'b.out', 'c.out'];
    const hashes = names.map((name) => io.hashFile(join(root, name)));
    const written = names.map(() => [] as Buffer[]);
    // Appends of every size, the three files interleaved, each hash told only after its write.
    for (const size of [1, 0, 70_000, (1 << 20) + 3, 5, 3 << 20, 17]) {
      names.forEach((name, i) => {
        const data = randomBytes(size);
        appendFileSync(join(root, name), data);
        written[i]?.push(data);
        hashes[i]?.appended(data, written[i]?.reduce((sum, b) => sum + b.length, 0) ?? 0);
      });
    }
    const digests = await Promise.all(hashes.map((hash) => hash.digest()));
    expect(digests).toEqual(written.map((parts) => createHash('sha256').update(Buffer.concat(parts)).digest('hex')));
    // Nothing appended: the digest of nothing.
    expect(await io.hashFile(join(root, 'a.out')).digest()).toBe(createHash('sha256').digest('hex'));
  });

  it('reject the digest of a file that lost bytes its writer wrote, or that was removed', async () => {
    const root = await tree({ 'short.out': '', 'gone.out': '' });
    const short = io.hashFile(join(root, 'short.out'));
    appendFileSync(join(root, 'short.out'), 'abcdef');
    truncateSync(join(root, 'short.out'), 3);
    short.appended(Buffer.from('abcdef'), 6);
    await expect(short.digest()).rejects.toThrow(/ended at 3 bytes, before the 6 its writer wrote/);

    const gone = io.hashFile(join(root, 'gone.out'));
    rmSync(join(root, 'gone.out'));
    gone.appended(Buffer.from('x'), 1);
    await expect(gone.digest()).rejects.toThrow(/ENOENT/);
  });

  // Meaningful only where the test itself runs below nice 19 (not under `nice -n 19 npm test`).
  it.runIf(process.platform === 'linux' && getPriority() < 19)(
    'run, like the tokenizer threads, at a lower CPU priority than the thread that serves requests',
    async () => {
      const own = getPriority();
      const before = threadNiceValues().filter((nice) => nice === 19).length;
      const pool = createTokenPool({ encoding: 'o200k_base', threads: 2 });
      try {
        await pool.warm();
        await walkInThread(input(await tree({ 'a.txt': 'a' })), () => {});
        const after = threadNiceValues().filter((nice) => nice === 19).length;
        // Two tokenizer threads, and at least the io thread of this walk (it may have started earlier).
        expect(after - before).toBeGreaterThanOrEqual(2);
        expect(after).toBeGreaterThanOrEqual(3);
        expect(getPriority()).toBe(own);
      } finally {
        await pool.close();
      }
    },
  );
});

describe('the walk thread', () => {
  const threadCount = (): number => readdirSync('/proc/self/task').length;
  const settle = async (expected: number): Promise<number> => {
    for (let i = 0; i < 100 && threadCount() !== expected; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    return threadCount();
  };
  /** The thread count once it has not moved for 100 ms. */
  const steady = async (): Promise<number> => {
    for (let last = threadCount(); ;) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const now = threadCount();
      if (now === last) return now;
      last = now;
    }
  };
  const walkBoth = async (root: string): Promise<void> => {
    const files: WalkedFile[] = [];
    const skipped = await walkInThread(input(root), (chunk) => files.push(...chunk));
    expect({ files, skipped }).toEqual(await walkTree(input(root)));
  };
  const trees = async (): Promise<{ small: string; big: string }> => {
    const spec: Record<string, string> = {};
    for (let i = 0; i <= KEEP_WALK_THREAD_UP_TO; i++) spec[`d${i % 10}/f${i}.ts`] = 'x';
    return { small: await tree({ 'src/a.ts': 'a', 'README.md': '# r' }), big: await tree(spec) };
  };

  // Counts, not ±1: a thread started from TypeScript sources brings its loader's thread along.
  it.runIf(process.platform === 'linux')(
    `ends with a walk over ${KEEP_WALK_THREAD_UP_TO} paths, and waits for the next walk after a smaller one`,
    async () => {
      const { small, big } = await trees();
      await walkBoth(big);
      const none = await steady();
      await walkBoth(small);
      const waiting = await steady();
      expect(waiting).toBeGreaterThan(none);
      // The small walks that follow run on that thread: none is started, none ends.
      await walkBoth(small);
      await walkBoth(small);
      expect(await steady()).toBe(waiting);
      await walkBoth(big);
      expect(await settle(none)).toBe(none);
    },
  );

  it.runIf(process.platform === 'linux')(
    'is started ahead by prepareWalk once however often asked, and the next walk takes it',
    async () => {
      const { small, big } = await trees();
      await walkBoth(small);
      await walkBoth(big);
      const none = await steady();
      await walkBoth(small);
      const one = await steady();
      await walkBoth(big);
      expect(await settle(none)).toBe(none);
      io.prepareWalk();
      io.prepareWalk();
      await walkBoth(small);
      // Exactly one walk thread, booted and waiting: the prepared one, taken by the walk and kept.
      expect(await steady()).toBe(one);
      io.prepareWalk();
      expect(await steady()).toBe(one);
    },
  );

  const manyFiles = async (count: number): Promise<string> => {
    const spec: Record<string, string> = {};
    for (let i = 0; i < count; i++) spec[`d${i % 40}/e${i % 7}/f${i}.ts`] = '';
    return tree(spec);
  };

  it('stops when its signal aborts: the walk rejects with the reason and hands on nothing more', async () => {
    const root = await manyFiles(6000);
    const controller = new AbortController();
    const reason = new Error('cancelled by the test');
    let received = 0;
    let afterAbort = 0;
    const walking = walkInThread(
      input(root),
      (chunk) => {
        if (controller.signal.aborted) afterAbort += chunk.length;
        received += chunk.length;
        controller.abort(reason);
      },
      controller.signal,
    );
    await expect(walking).rejects.toBe(reason);
    expect(received).toBeGreaterThan(0);
    expect(received).toBeLessThan(6000);
    // What the thread had already sent before it was ended is dropped, not handed on.
    expect(afterAbort).toBe(0);
    // A walk after it runs as usual.
    const files: WalkedFile[] = [];
    await walkInThread(input(root), (chunk) => files.push(...chunk));
    expect(files).toHaveLength(6000);
    await expect(walkInThread(input(root), () => {}, AbortSignal.abort(reason))).rejects.toBe(reason);
  });

  it('stops at its deadline with a WalkTimeoutError, the same on the calling thread', async () => {
    const root = await manyFiles(3000);
    const limits = { ...DEFAULT_ENGINE_LIMITS, walkTimeoutMs: 1 };
    await expect(walkInThread(input(root, { limits }), () => {})).rejects.toBeInstanceOf(WalkTimeoutError);
    const error = await walkTree(input(root, { limits })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WalkTimeoutError);
    expect(error).toMatchObject({ code: 'WALK_TIMEOUT', message: expect.stringMatching(/took longer than 0 s/) });
  });
});
