// Bombs and lying archives: refused from the central directory before anything is inflated,
// or, when only the data can tell (a lying size), during extraction with destDir emptied.
import { readdir, stat } from 'node:fs/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { extractZip } from '../../src/archive/index.js';
import { LIMITS, MiB, Scratch, expectScanError } from './zip-fixtures.js';

const scratch = new Scratch();
beforeAll(() => scratch.setUp());
afterAll(() => scratch.tearDown());
afterEach(() => scratch.expectNoTempFiles());

describe('bombs, refused before inflating', () => {
  // How fast these refusals are is measured by `npm run bench`; here only what they do.
  it('refuses a ratio bomb (200 MB of zeros in ~200 kB) without inflating or writing', async () => {
    const zip = await scratch.craft('ratio-bomb.zip', {
      entries: [{ name: 'zeros.bin', zeros: 200 * MiB, method: 'deflated' }],
    });
    expect((await stat(zip)).size).toBeLessThan(MiB);
    const dest = await scratch.dest();
    const rssBefore = process.memoryUsage.rss();
    const message = await expectScanError(
      extractZip({ zipPath: zip, destDir: dest, limits: LIMITS }),
      'ARCHIVE_TOO_LARGE',
    );
    expect(process.memoryUsage.rss() - rssBefore).toBeLessThan(50 * MiB);
    expect(message).toMatch(/100 times its own size/);
    expect(await readdir(dest)).toEqual([]);
  });

  it('refuses an archive whose declared sizes add up to more than the limit', async () => {
    // Stored: the ratio is 1, only the total trips.
    const zip = await scratch.craft('total.zip', {
      entries: [
        { name: 'a.bin', zeros: 700 * 1024 },
        { name: 'b.bin', zeros: 700 * 1024 },
      ],
    });
    const dest = await scratch.dest();
    expect(
      await expectScanError(
        extractZip({ zipPath: zip, destDir: dest, limits: { ...LIMITS, maxUncompressedBytes: MiB } }),
        'ARCHIVE_TOO_LARGE',
      ),
    ).toMatch(/more than 1\.0 MiB uncompressed/);
    expect(await readdir(dest)).toEqual([]);
  });

  it('refuses two central-directory records that share one local header (overlap bomb)', async () => {
    const zip = await scratch.craft('overlap-same.zip', {
      entries: [{ name: 'a.txt', data: 'a'.repeat(1000), method: 'deflated' }],
      patches: [{ op: 'duplicate', index: 0, name: 'b.txt' }],
    });
    const dest = await scratch.dest();
    const message = await expectScanError(
      extractZip({ zipPath: zip, destDir: dest, limits: LIMITS }),
      'UNSAFE_ARCHIVE',
    );
    expect(message).toMatch(/overlap/);
    expect(await readdir(dest)).toEqual([]);
  });

  it("refuses an entry whose data range swallows the next entries' headers (Fifield's construction)", async () => {
    const zip = await scratch.craft('overlap-span.zip', {
      entries: [
        { name: 'a.txt', data: 'a' },
        { name: 'b.txt', data: 'b' },
        { name: 'c.txt', data: 'c' },
      ],
      patches: [{ op: 'cover-rest', index: 0 }],
    });
    const dest = await scratch.dest();
    expect(
      await expectScanError(extractZip({ zipPath: zip, destDir: dest, limits: LIMITS }), 'UNSAFE_ARCHIVE'),
    ).toMatch(/overlap/);
    expect(await readdir(dest)).toEqual([]);
  });

  it('refuses 25 000 tiny entries from the end record alone', async () => {
    const zip = await scratch.craft('many.zip', { many: 25_000 });
    const dest = await scratch.dest();
    expect(
      await expectScanError(extractZip({ zipPath: zip, destDir: dest, limits: LIMITS }), 'TOO_MANY_ENTRIES'),
    ).toMatch(/25000 entries, more than the limit of 10000/);
    expect(await readdir(dest)).toEqual([]);
  });

  it('accepts exactly maxEntries entries and refuses one more', async () => {
    const entries = [
      { name: 'a', data: '' },
      { name: 'b', data: '' },
      { name: 'c/', mode: 0o40755 },
    ];
    const limits = { ...LIMITS, maxEntries: 3 };
    const zip = await scratch.craft('three.zip', { entries });
    expect(await extractZip({ zipPath: zip, destDir: await scratch.dest(), limits })).toMatchObject({ entries: 3 });
    const four = await scratch.craft('four.zip', { entries: [...entries, { name: 'd', data: '' }] });
    await expectScanError(extractZip({ zipPath: four, destDir: await scratch.dest(), limits }), 'TOO_MANY_ENTRIES');
  });
});

describe('lying sizes, caught while extracting', () => {
  it('refuses a stored entry whose sizes were shortened in both headers, and empties destDir', async () => {
    // yauzl reads exactly the declared bytes and cannot tell; the CRC check can.
    const zip = await scratch.craft('lying-stored.zip', {
      entries: [
        { name: 'first.txt', data: 'written before the liar' },
        { name: 'liar.txt', data: 'x'.repeat(10_000) },
      ],
      patches: [{ op: 'shrink', index: 1, size: 10 }],
    });
    const dest = await scratch.dest();
    expect(
      await expectScanError(extractZip({ zipPath: zip, destDir: dest, limits: LIMITS }), 'UNSAFE_ARCHIVE'),
    ).toMatch(/does not match its checksum/);
    expect(await readdir(dest)).toEqual([]);
  });

  it('refuses a deflated entry that inflates to more than it declares, and empties destDir', async () => {
    const zip = await scratch.craft('lying-deflated.zip', {
      entries: [
        { name: 'dir/first.txt', data: 'written before the liar' },
        { name: 'dir/liar.bin', zeros: MiB, method: 'deflated' },
      ],
      patches: [{ op: 'set-uncompressed', index: 1, size: 10 }],
    });
    const dest = await scratch.dest();
    expect(
      await expectScanError(extractZip({ zipPath: zip, destDir: dest, limits: LIMITS }), 'UNSAFE_ARCHIVE'),
    ).toMatch(/declares sizes that do not match/);
    expect(await readdir(dest)).toEqual([]);
  });

  it('refuses a stored entry whose two declared sizes disagree, before writing', async () => {
    const zip = await scratch.craft('mismatch.zip', {
      entries: [{ name: 'a.txt', data: 'a'.repeat(100) }],
      patches: [{ op: 'set-uncompressed', index: 0, size: 10 }],
    });
    const dest = await scratch.dest();
    await expectScanError(extractZip({ zipPath: zip, destDir: dest, limits: LIMITS }), 'UNSAFE_ARCHIVE');
    expect(await readdir(dest)).toEqual([]);
  });
});
