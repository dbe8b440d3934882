// Archives with one unsafe entry: the whole archive is refused with UNSAFE_ARCHIVE and nothing
// is written, neither in destDir nor anywhere else.
import { existsSync } from 'node:fs';
import { mkdir, readFile, readdir, rename, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { extractZip } from '../../src/archive/index.js';
import { inspectCentralDirectory } from '../../src/archive/inspect-central-directory.js';
import { writeEntries } from '../../src/archive/write-entries.js';
import { openZipReader, type ZipReader } from '../../src/archive/yauzl-reader.js';
import { PROVES_PATHS } from '@reposcan/core/proven-path';
import { type CraftSpec, LIMITS, Scratch, expectScanError } from './zip-fixtures.js';

const scratch = new Scratch();
beforeAll(() => scratch.setUp());
afterAll(() => scratch.tearDown());
afterEach(() => scratch.expectNoTempFiles());

/** Extracts into a fresh folder next to `outside`; expects a refusal and an untouched world. */
async function expectUnsafe(spec: CraftSpec, outside?: string): Promise<string> {
  const zip = await scratch.craft('unsafe.zip', spec);
  const dest = await scratch.dest();
  const before = outside === undefined ? [] : await readdir(outside, { recursive: true });
  const message = await expectScanError(extractZip({ zipPath: zip, destDir: dest, limits: LIMITS }), 'UNSAFE_ARCHIVE');
  expect(await readdir(dest)).toEqual([]);
  if (outside !== undefined) expect(await readdir(outside, { recursive: true })).toEqual(before);
  return message;
}

const ok = { name: 'ok.txt', data: 'written first, if anything were written' };

describe('zip slip', () => {
  // `escapesTo`: where a naive extractor would write, relative to destDir (absolute names aim
  // into a scratch folder, never at the real system).
  it.each([
    ['../x', '../x'],
    ['a/../../x', '../x'],
    ['../../../../../../../../../../../../tmp/zip-slip-probe.txt', '/tmp/zip-slip-probe.txt'],
    ['..\\x', '../x'],
    ['a\\..\\..\\x', '../x'],
    ['C:/x', 'C:/x'],
    ['c:x', 'c:x'],
  ])('refuses the entry name %j', async (name, escapesTo) => {
    const outside = await scratch.outside();
    await expectUnsafe({ entries: [ok, { name, data: 'evil' }] }, outside);
    const probe = path.resolve(scratch.root, 'dest-probe', escapesTo);
    expect(existsSync(probe)).toBe(false);
  });

  it('refuses an absolute name', async () => {
    const outside = await scratch.outside();
    await expectUnsafe({ entries: [ok, { name: path.join(outside, 'abs.txt'), data: 'evil' }] }, outside);
  });
});

describe('links and special files', () => {
  it('refuses a symlink entry to /etc/passwd', async () => {
    const message = await expectUnsafe({ entries: [ok, { name: 'passwd', data: '/etc/passwd', mode: 0o120777 }] });
    expect(message).toMatch(/"passwd" is a symbolic link/);
  });

  it('refuses a symlink followed by a file of the same name (write-through)', async () => {
    const outside = await scratch.outside();
    const target = path.join(outside, 't.txt');
    await expectUnsafe(
      {
        entries: [
          { name: 'link', data: target, mode: 0o120777 },
          { name: 'link', data: 'overwritten through the link' },
        ],
      },
      outside,
    );
    await writeFile(target, 'original');
    await expectUnsafe(
      {
        entries: [
          { name: 'link', data: target, mode: 0o120777 },
          { name: 'link', data: 'overwritten' },
        ],
      },
      outside,
    );
    expect(await readFile(target, 'utf8')).toBe('original');
  });

  it('refuses a directory symlink used as a prefix (d -> outside, then d/x.txt and d/new/x.txt)', async () => {
    const outside = await scratch.outside();
    await expectUnsafe(
      {
        entries: [
          { name: 'd', data: outside, mode: 0o120777 },
          { name: 'd/x.txt', data: 'x' },
          { name: 'd/new/x.txt', data: 'x' },
        ],
      },
      outside,
    );
    expect(await readdir(outside)).toEqual([]);
  });

  it('refuses a relative symlink that climbs out', async () => {
    await expectUnsafe({ entries: [{ name: 'up', data: '../../../../..', mode: 0o120777 }] });
  });

  it.each([
    ['FIFO', 0o010644],
    ['character device', 0o020644],
    ['block device', 0o060644],
    ['socket', 0o140644],
  ])('refuses a %s entry', async (_label, mode) => {
    expect(await expectUnsafe({ entries: [ok, { name: 'special', mode }] })).toMatch(/special file/);
  });

  it('refuses a regular-file entry whose name ends with "/"', async () => {
    await expectUnsafe({ entries: [{ name: 'x/', mode: 0o100644 }] });
  });
});

describe('names', () => {
  it.each([
    ['a line feed', 'a\nb.txt'],
    ['a carriage return', 'x\r'],
    ['an escape sequence', '\u001b[31mred'],
    ['DEL', 'a\u007fb'],
    ['a C1 control (UTF-8 name)', 'a\u0085b.txt'],
  ])('refuses a name with %s', async (_label, name) => {
    const message = await expectUnsafe({ entries: [ok, { name, data: 'x' }] });
    expect(message).toMatch(/control characters/);
    // The message quotes the name escaped, never raw.
    expect([...message].some((character) => character < ' ' || (character >= '\u007f' && character <= '\u009f'))).toBe(
      false,
    );
  });

  it('refuses README and readme in one archive (case-fold duplicates)', async () => {
    const message = await expectUnsafe({
      entries: [
        { name: 'README', data: 'a' },
        { name: 'readme', data: 'b' },
      ],
    });
    expect(message).toMatch(/"README" and "readme" differ only in letter case/);
  });

  it('refuses NFC/NFD twins', async () => {
    await expectUnsafe({
      entries: [
        { name: 'caf\u00e9.txt', data: 'a' },
        { name: 'cafe\u0301.txt', data: 'b' },
      ],
    });
  });

  it('refuses an exact duplicate', async () => {
    await expectUnsafe({
      entries: [
        { name: 'a.txt', data: 'a' },
        { name: 'a.txt', data: 'b' },
      ],
    });
  });

  it('refuses a name that is a file and a folder (a, then A/b.txt)', async () => {
    await expectUnsafe({
      entries: [
        { name: 'a', data: 'a' },
        { name: 'A/b.txt', data: 'b' },
      ],
    });
  });

  it('refuses one folder spelled two ways (Src/a, src/b)', async () => {
    await expectUnsafe({
      entries: [
        { name: 'Src/a', data: 'a' },
        { name: 'src/b', data: 'b' },
      ],
    });
  });

  it('refuses names over the length and depth limits, and accepts them at the limit', async () => {
    await expectUnsafe({ entries: [{ name: 'x'.repeat(256), data: 'x' }] });
    await expectUnsafe({ entries: [{ name: `${'d/'.repeat(50)}f`, data: 'x' }] });
    await expectUnsafe({ entries: [{ name: `${'abcdefghi/'.repeat(102)}f`, data: 'x' }] });
    const zip = await scratch.craft('at-limit.zip', {
      entries: [
        { name: `a/${'x'.repeat(255)}`, data: 'x' },
        { name: `b/${'d/'.repeat(48)}f`, data: 'x' },
      ],
    });
    const result = await extractZip({ zipPath: zip, destDir: await scratch.dest(), limits: LIMITS });
    expect(result.entries).toBe(2);
  });

  it('accepts Unicode names that are not controls', async () => {
    const zip = await scratch.craft('unicode.zip', {
      entries: [
        { name: 'docs/日本語.md', data: 'x' },
        { name: 'docs/\u202etxt.exe', data: 'y' },
      ],
    });
    const dest = await scratch.dest();
    await extractZip({ zipPath: zip, destDir: dest, limits: LIMITS });
    expect((await readdir(path.join(dest, 'docs'))).sort()).toEqual(['日本語.md', '\u202etxt.exe'].sort());
  });
});

describe('encryption', () => {
  it('refuses an entry with the encryption flag (deflated)', async () => {
    const message = await expectUnsafe({
      entries: [ok, { name: 'secret.txt', data: 'secret'.repeat(10), method: 'deflated' }],
      patches: [{ op: 'encrypt', index: 1 }],
    });
    expect(message).toMatch(/encrypted/);
  });

  it('refuses an entry with the encryption flag (stored)', async () => {
    await expectUnsafe({ entries: [{ name: 'secret.txt', data: 'secret' }], patches: [{ op: 'encrypt', index: 0 }] });
  });
});

describe.skipIf(!PROVES_PATHS)('folders swapped for a link while entries are written', () => {
  /** Writes the archive, swapping `swapped` (below dest) for a link to outside as `trigger` is read. */
  async function writeSwapping(
    entries: { name: string; data?: string; directory?: boolean }[],
    trigger: string,
    swapped: string,
    outside: string,
  ) {
    const zipPath = await scratch.archive('swap.zip', entries);
    const dest = await scratch.dest();
    const zip = await openZipReader(zipPath);
    try {
      const planned = await inspectCentralDirectory(zip, LIMITS);
      const swapping: ZipReader = {
        ...zip,
        openEntry: async (entry) => {
          if (entry.fileName === trigger) {
            await rename(path.join(dest, swapped), path.join(dest, 'moved-away'));
            await symlink(outside, path.join(dest, swapped));
          }
          return zip.openEntry(entry);
        },
      };
      return await expectScanError(
        writeEntries(swapping, planned, dest, LIMITS.maxUncompressedBytes),
        'UNSAFE_ARCHIVE',
      );
    } finally {
      zip.close();
    }
  }

  it('makes no folder and writes no file through a swapped folder, at any depth', async () => {
    const outside = await scratch.outside();
    await mkdir(path.join(outside, 'deep'));
    const entries = [
      { name: 'src/deep/', directory: true },
      { name: 'other.txt', data: 'x' },
      { name: 'src/deep/a.txt', data: 'through the link' },
      { name: 'src/new/b.txt', data: 'through the link' },
    ];
    expect(await writeSwapping(entries, 'other.txt', 'src', outside)).toMatch(
      /"src\/deep\/a.txt" is not where the archive puts it/,
    );
    expect(await readdir(outside, { recursive: true })).toEqual(['deep']);
    // A folder not made yet below the swapped one is refused as well: its parent is checked first.
    expect(
      await writeSwapping(
        entries.filter((e) => e.name !== 'src/deep/a.txt'),
        'other.txt',
        'src',
        outside,
      ),
    ).toMatch(/"src\/new\/b.txt"/);
    expect(await readdir(outside, { recursive: true })).toEqual(['deep']);
  });
});
