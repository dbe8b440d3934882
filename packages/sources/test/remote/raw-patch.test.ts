// git's `diff --raw -p` output read back from its file a window at a time: each change names its
// patch as a byte range, wherever the windows fall.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readRawPatch } from '../../src/remote/change-set.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'reposcan-raw-patch-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The size of one read of the file. */
const WINDOW = 4 << 20;

const RECORDS = [
  ':100644 100644 1111111 2222222 M\ta.txt',
  ':000000 100644 0000000 3333333 A\tb.bin',
  ':100644 100644 4444444 4444444 R100\told.ts\tnew.ts',
  ':100644 000000 5555555 0000000 D\t"caf\\303\\251.md"',
];

function patchOfA(addedLines: number, lastLine: string): string {
  const lines = Array.from({ length: addedLines }, (_, i) => `+added line ${String(i).padStart(7, '0')}\n`).join('');
  return `diff --git a/a.txt b/a.txt\nindex 1111111..2222222 100644\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1,${addedLines + 1} @@\n${lines}${lastLine}`;
}
const BINARY =
  'diff --git a/b.bin b/b.bin\nnew file mode 100644\nindex 0000000..3333333\nBinary files /dev/null and b/b.bin differ\n';
const RENAME = 'diff --git a/old.ts b/new.ts\nsimilarity index 100%\nrename from old.ts\nrename to new.ts\n';
const DELETE =
  'diff --git "a/caf\\303\\251.md" "b/caf\\303\\251.md"\ndeleted file mode 100644\nindex 5555555..0000000\n--- "a/caf\\303\\251.md"\n+++ /dev/null\n@@ -1 +0,0 @@\n-caf\xe9\n';

function write(name: string, patches: string[]): { file: string; starts: number[] } {
  const head = `${RECORDS.join('\n')}\n\n`;
  const parts = [Buffer.from(head, 'utf8'), ...patches.map((p) => Buffer.from(p, 'latin1'))];
  const starts: number[] = [];
  let at = parts[0]!.length;
  for (const part of parts.slice(1)) {
    starts.push(at);
    at += part.length;
  }
  const file = path.join(dir, name);
  writeFileSync(file, Buffer.concat(parts));
  return { file, starts };
}

describe('readRawPatch', () => {
  it('pairs every record with its patch as a byte range, and tells binary files', async () => {
    const patches = [patchOfA(3, ' kept\n'), BINARY, RENAME, DELETE];
    const { file, starts } = write('small.diff', patches);
    const changes = await readRawPatch(file);
    expect(changes.map((c) => [c.status, c.path, c.oldPath, c.similarity, c.binary])).toEqual([
      ['modified', 'a.txt', null, null, false],
      ['added', 'b.bin', null, null, true],
      ['renamed', 'new.ts', 'old.ts', 100, false],
      ['deleted', 'café.md', null, null, false],
    ]);
    expect(changes.map((c) => c.diff)).toEqual([
      { at: starts[0], length: Buffer.byteLength(patches[0]!, 'latin1') },
      { at: starts[1], length: 0 },
      { at: starts[2], length: Buffer.byteLength(RENAME, 'latin1') },
      { at: starts[3], length: Buffer.byteLength(DELETE, 'latin1') },
    ]);
  });

  it.each([
    ['a patch header cut by the end of a read', 5],
    ['a read ending right before a header', 0],
    ['a hunk line cut by the end of a read', -40],
  ])('finds the patches after %s', async (_, intoHeader) => {
    // The next header starts `intoHeader` bytes before the first read ends (a negative value: after
    // it, the read ending in the first patch's last line).
    const head = Buffer.byteLength(`${RECORDS.join('\n')}\n\n`);
    const target = WINDOW - intoHeader - head;
    const lines = Math.floor(target / Buffer.byteLength('+added line 0000000\n')) - 10;
    // The last line makes up the rest exactly.
    const rest = target - Buffer.byteLength(patchOfA(lines, ''));
    const first = patchOfA(lines, `+${'x'.repeat(rest - 2)}\n`);
    const { file, starts } = write(`cut-${intoHeader}.diff`, [first, BINARY, RENAME, DELETE]);
    expect(starts[1]).toBe(WINDOW - intoHeader);
    const changes = await readRawPatch(file);
    expect(changes.map((c) => c.diff)).toEqual([
      { at: starts[0], length: starts[1]! - starts[0]! },
      { at: starts[1], length: 0 },
      { at: starts[2], length: Buffer.byteLength(RENAME) },
      { at: starts[3], length: Buffer.byteLength(DELETE, 'latin1') },
    ]);
    expect(changes.map((c) => c.binary)).toEqual([false, true, false, false]);
  });

  it('refuses output whose records and patches do not pair up', async () => {
    const { file } = write('short.diff', [patchOfA(1, ''), BINARY, RENAME]);
    await expect(readRawPatch(file)).rejects.toThrow('git diff gave 4 changed paths but 3 patches');
  });
});
