import { mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileStore } from '../src/file-store.js';

const REPO = 'a'.repeat(64);
const text = (s: string): Uint8Array => new TextEncoder().encode(s);
const decode = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);
/** Room for these entries' texts, back to back. */
const room = (entries: { length: number }[]): Uint8Array =>
  new Uint8Array(entries.reduce((sum, entry) => sum + entry.length, 0));

describe('FileStore', () => {
  let root: string;
  let store: FileStore;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'reposcan-file-store-'));
    store = new FileStore(root);
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  const writeSegment = async (entries: [string, string | null][]): Promise<void> => {
    const files = await store.open<{ n: string }>(REPO);
    const writer = await files.writer();
    for (const [key, body] of entries) await writer.add(key, { n: key }, body === null ? undefined : text(body));
    await writer.commit();
    await files.close();
  };

  it('keeps nothing visible until a segment is committed, then every worker reads it', async () => {
    expect(await store.knows(REPO)).toBe(false);
    const files = await store.open<{ n: string }>(REPO);
    const writer = await files.writer();
    await writer.add('k1', { n: 'one' }, text('first text'));
    expect(await store.knows(REPO)).toBe(false);
    await writer.commit();
    await files.close();
    expect(await store.knows(REPO)).toBe(true);
    const again = await store.open<{ n: string }>(REPO);
    const entry = again.entries.get('k1');
    expect(entry?.meta).toEqual({ n: 'one' });
    expect((await again.read([entry!], room([entry!]))).map(decode)).toEqual(['first text']);
    await again.close();
  });

  it('reads entries in any order, across segments, large texts and none', async () => {
    const big = 'x'.repeat(3 << 20);
    await writeSegment([
      ['a', 'alpha'],
      ['b', big],
      ['c', null],
      ['d', 'delta'],
    ]);
    await writeSegment([['e', 'epsilon']]);
    const files = await store.open<{ n: string }>(REPO);
    const keys = ['e', 'd', 'a', 'b', 'c'];
    const entries = keys.map((k) => files.entries.get(k)!);
    const into = room(entries);
    const texts = await files.read(entries, into);
    expect(texts.map(decode)).toEqual(['epsilon', 'delta', 'alpha', big, '']);
    // Each text is a view of the caller's memory, back to back in the order asked.
    expect(texts.every((t) => t.buffer === into.buffer)).toBe(true);
    expect(decode(into.subarray(0, 17))).toBe('epsilondeltaalpha');
    await expect(files.read(entries, new Uint8Array(into.length - 1))).rejects.toThrow(RangeError);
    await files.close();
  });

  it('an aborted writer leaves nothing; a damaged index hides its segment', async () => {
    const files = await store.open<{ n: string }>(REPO);
    const writer = await files.writer();
    await writer.add('k', { n: 'k' }, text('never committed'));
    await writer.abort();
    await files.close();
    expect(await readdir(join(root, REPO))).toEqual([]);

    await writeSegment([['k', 'kept']]);
    const index = (await readdir(join(root, REPO))).find((name) => name.endsWith('.idx'))!;
    await writeFile(join(root, REPO, index), '["k", 0, 999999, {}]\n');
    const damaged = await store.open<{ n: string }>(REPO);
    expect(damaged.entries.size).toBe(0);
    await damaged.close();
  });

  it('prune drops segments unused since the cut-off, but a scan holding one still reads it', async () => {
    await writeSegment([['k', 'kept text']]);
    const holder = await store.open<{ n: string }>(REPO);
    const old = new Date(Date.now() - 10 * 86_400_000);
    for (const name of await readdir(join(root, REPO))) await utimes(join(root, REPO, name), old, old);
    expect(await store.prune(Date.now() - 86_400_000)).toBe(1);
    expect(await store.knows(REPO)).toBe(false);
    const kept = [holder.entries.get('k')!];
    expect((await holder.read(kept, room(kept))).map(decode)).toEqual(['kept text']);
    await holder.close();

    // A segment read by a scan is used: its times are renewed, so prune keeps it.
    await writeSegment([['u', 'used']]);
    for (const name of await readdir(join(root, REPO))) await utimes(join(root, REPO, name), old, old);
    const reader = await store.open<{ n: string }>(REPO);
    const used = [reader.entries.get('u')!];
    await reader.read(used, room(used));
    await reader.close();
    expect(await store.prune(Date.now() - 86_400_000)).toBe(0);
    expect(await store.knows(REPO)).toBe(true);
  });
});
