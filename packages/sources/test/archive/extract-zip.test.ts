import { execFileSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { chmod, chown, lstat, mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { extractZip } from '../../src/archive/index.js';
import { LIMITS, MiB, Scratch, expectScanError, listTree } from './zip-fixtures.js';

const scratch = new Scratch();
beforeAll(() => scratch.setUp());
afterAll(() => scratch.tearDown());
afterEach(() => scratch.expectNoTempFiles());

const extract = (zipPath: string, destDir: string) => extractZip({ zipPath, destDir, limits: LIMITS });

/** packages/sources */
const SOURCES = fileURLToPath(new URL('../..', import.meta.url));

/** Whether `nobody` can read the code: every ancestor searchable and the folder readable. */
function readableByOthers(target: string): boolean {
  for (let dir = target; ; dir = path.dirname(dir)) {
    if ((statSync(dir).mode & 0o005) !== 0o005) return false;
    if (path.dirname(dir) === dir) return true;
  }
}

describe('extractZip: ordinary archives', () => {
  it('unwraps a single top-level folder and names the repository after it, as archived', async () => {
    const zip = await scratch.archive('host.zip', [
      { name: 'gittxt-main/', directory: true },
      { name: 'gittxt-main/README.md', data: '# gittxt\n' },
      { name: 'gittxt-main/src/app.ts', data: 'export const x = 1;\n' },
      { name: 'gittxt-main/src/empty/', directory: true },
    ]);
    const dest = await scratch.dest();
    const result = await extract(zip, dest);
    expect(result).toEqual({
      root: path.join(dest, 'gittxt-main'),
      name: 'gittxt-main',
      entries: 4,
      bytes: 9 + 20,
    });
    expect(await listTree(result.root)).toEqual(['README.md', 'src/', 'src/app.ts', 'src/empty/']);
    expect(await readFile(path.join(result.root, 'src/app.ts'), 'utf8')).toBe('export const x = 1;\n');
  });

  it('extracts into destDir itself when there are several top-level names', async () => {
    const zip = await scratch.archive('flat.zip', [
      { name: 'README.md', data: 'hello' },
      { name: 'src/a.py', data: 'print(1)\n' },
    ]);
    const dest = await scratch.dest();
    const result = await extract(zip, dest);
    expect(result).toMatchObject({ root: dest, name: null, entries: 2, bytes: 14 });
    expect(await listTree(dest)).toEqual(['README.md', 'src/', 'src/a.py']);
  });

  it('does not unwrap when the only top-level entry is a file', async () => {
    const zip = await scratch.archive('one-file.zip', [{ name: 'notes.txt', data: 'x' }]);
    const dest = await scratch.dest();
    expect(await extract(zip, dest)).toMatchObject({ root: dest, name: null, entries: 1 });
  });

  it('accepts an empty zip', async () => {
    const zip = await scratch.craft('empty.zip', {});
    const dest = await scratch.dest();
    expect(await extract(zip, dest)).toEqual({ root: dest, name: null, entries: 0, bytes: 0 });
    expect(await readdir(dest)).toEqual([]);
  });

  it('drops macOS metadata (__MACOSX/, .DS_Store), so a Finder zip still unwraps', async () => {
    const zip = await scratch.craft('finder.zip', {
      entries: [
        { name: 'repo/', mode: 0o40755 },
        { name: 'repo/a.txt', data: 'a' },
        { name: 'repo/.DS_Store', data: 'Bud1' },
        { name: '__MACOSX/', mode: 0o40755 },
        { name: '__MACOSX/repo/._a.txt', data: 'resource fork' },
      ],
    });
    const dest = await scratch.dest();
    const result = await extract(zip, dest);
    expect(result).toMatchObject({ root: path.join(dest, 'repo'), name: 'repo', entries: 2, bytes: 1 });
    expect(await listTree(dest)).toEqual(['repo/', 'repo/a.txt']);
  });

  it('reads "./" prefixes (bsdtar) as the archive root', async () => {
    const zip = await scratch.craft('dot.zip', {
      entries: [
        { name: './', mode: 0o40755 },
        { name: './src/a.ts', data: 'a' },
      ],
    });
    const dest = await scratch.dest();
    expect(await extract(zip, dest)).toMatchObject({ root: path.join(dest, 'src'), name: 'src', entries: 1 });
    expect(await listTree(dest)).toEqual(['src/', 'src/a.ts']);
  });

  it('reads entries written by DOS/Windows tools (no Unix mode)', async () => {
    const zip = await scratch.craft('dos.zip', {
      entries: [
        { name: 'dir/', mode: 0 },
        { name: 'dir/a.txt', data: 'a', mode: 0, method: 'deflated' },
      ],
    });
    const dest = await scratch.dest();
    expect(await extract(zip, dest)).toMatchObject({ name: 'dir', entries: 2, bytes: 1 });
  });

  it('reads names as Info-ZIP writes them (UTF-8 bytes, no UTF-8 flag) as UTF-8, and other flagless names as CP437', async () => {
    const zip = await scratch.craft('info-zip.zip', {
      entries: [
        { name: 'proj/café.txt', data: 'a' },
        { name: 'proj/日本語.md', data: 'b' },
        // "naïve.md" with its two UTF-8 bytes for ï replaced by 0x8B 0x20: not UTF-8, so CP437 ("ï ").
        { name: 'proj/naïve.md', data: 'c' },
      ],
      patches: [
        { op: 'legacy-name', index: 0 },
        { op: 'legacy-name', index: 1 },
        { op: 'legacy-name', index: 2, hex: Buffer.from('proj/na\x8b ve.md', 'latin1').toString('hex') },
      ],
    });
    const dest = await scratch.dest();
    expect(await extract(zip, dest)).toMatchObject({ name: 'proj', entries: 3 });
    expect(await listTree(dest)).toEqual(['proj/', 'proj/café.txt', 'proj/na\u00ef ve.md', 'proj/日本語.md']);
  });

  it('ignores archive permissions: a 0o300 file and a 0o000 folder come out 0o644 / 0o755 and removable', async () => {
    const zip = await scratch.craft('modes.zip', {
      entries: [
        { name: 'locked/', mode: 0o40000 },
        { name: 'locked/inner.txt', data: 'x', mode: 0o100300 },
        { name: 'wo/', mode: 0o40300 },
        { name: 'wo/tool.sh', data: '#!/bin/sh\n', mode: 0o104777 },
      ],
    });
    const dest = await scratch.dest();
    await extract(zip, dest);
    for (const dir of ['locked', 'wo']) {
      const mode = (await lstat(path.join(dest, dir))).mode & 0o7777;
      expect(mode & 0o700).toBe(0o700);
      expect(mode & ~0o755).toBe(0);
    }
    for (const file of ['locked/inner.txt', 'wo/tool.sh']) {
      const mode = (await lstat(path.join(dest, file))).mode & 0o7777;
      expect(mode & 0o600).toBe(0o600);
      expect(mode & ~0o644).toBe(0); // no execute, no set-id
    }
    await rm(path.join(dest, 'locked'), { recursive: true });
    await rm(path.join(dest, 'wo'), { recursive: true });
  });

  // Root ignores permissions, so the 0o300 trap only shows for an ordinary user: run the
  // extraction and the removal as `nobody` in a child process, which must reach the sources and
  // this Node (not so for one under root's home, as `npx node@24` installs it).
  it.runIf(process.getuid?.() === 0 && readableByOthers(SOURCES) && readableByOthers(process.execPath))(
    'as an unprivileged user, a 0o300 folder entry leaves a removable tree',
    async () => {
      const zip = await scratch.craft('modes-nobody.zip', {
        entries: [
          { name: 'trap/', mode: 0o40300 },
          { name: 'trap/sub/', mode: 0o40000 },
          { name: 'trap/sub/a.txt', data: 'a', mode: 0o100000 },
        ],
      });
      const home = path.join(scratch.root, 'nobody');
      const dest = path.join(home, 'dest');
      await mkdir(dest, { recursive: true });
      await chown(home, 65534, 65534);
      await chown(dest, 65534, 65534);
      await chmod(scratch.root, 0o755);
      await chmod(path.dirname(zip), 0o755);
      const script = [
        `import { extractZip } from ${JSON.stringify(path.join(SOURCES, 'src/archive/index.ts'))};`,
        'import { rm, readdir } from "node:fs/promises";',
        `const r = await extractZip({ zipPath: ${JSON.stringify(zip)}, destDir: ${JSON.stringify(dest)}, limits: ${JSON.stringify(LIMITS)} });`,
        `const tree = await readdir(${JSON.stringify(dest)}, { recursive: true });`,
        'await rm(r.root, { recursive: true });',
        `console.log(JSON.stringify({ tree: tree.sort(), after: await readdir(${JSON.stringify(dest)}) }));`,
      ].join('\n');
      const output = execFileSync(
        process.execPath,
        ['--conditions=source', '--import', 'tsx', '--input-type=module', '-e', script],
        {
          uid: 65534,
          gid: 65534,
          cwd: SOURCES,
          env: { PATH: process.env.PATH ?? '', HOME: home, TMPDIR: home },
          encoding: 'utf8',
        },
      );
      expect(JSON.parse(output.trim().split('\n').at(-1)!)).toEqual({
        tree: ['trap', 'trap/sub', 'trap/sub/a.txt'],
        after: [],
      });
    },
  );

  it('accepts a zip behind a prefix when its offsets account for it (self-extractor style)', async () => {
    const zip = await scratch.craft('sfx.zip', { prefix: MiB, entries: [{ name: 'a.txt', data: 'a' }] });
    const dest = await scratch.dest();
    expect(await extract(zip, dest)).toMatchObject({ entries: 1, bytes: 1 });
  });

  it('refuses a zip with extra bytes in front whose offsets do not account for them', async () => {
    const zip = await scratch.craft('junk-prefix.zip', { naivePrefix: MiB, entries: [{ name: 'a.txt', data: 'a' }] });
    const dest = await scratch.dest();
    await expectScanError(extract(zip, dest), 'NOT_A_ZIP');
    expect(await readdir(dest)).toEqual([]);
  });

  it.each([
    ['an ELF binary renamed .zip', Buffer.concat([Buffer.from('\x7fELF\x02\x01\x01'), Buffer.alloc(4096)])],
    ['a .tar.gz renamed .zip', gzipSync(Buffer.alloc(10_240))],
    ['random junk', Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 7919) % 251))],
    ['an empty file', Buffer.alloc(0)],
    ['a text file', Buffer.from('PK is not enough\n')],
  ])('refuses %s with NOT_A_ZIP', async (_label, bytes) => {
    const zip = scratch.zipPath('not-a-zip.zip');
    await writeFile(zip, bytes);
    const dest = await scratch.dest();
    await expectScanError(extract(zip, dest), 'NOT_A_ZIP');
    expect(await readdir(dest)).toEqual([]);
  });

  it('refuses a truncated zip with NOT_A_ZIP', async () => {
    const whole = await readFile(await scratch.archive('whole.zip', [{ name: 'a.txt', data: 'a'.repeat(5000) }]));
    const zip = scratch.zipPath('truncated.zip');
    await writeFile(zip, whole.subarray(0, whole.length - 30));
    await expectScanError(extract(zip, await scratch.dest()), 'NOT_A_ZIP');
  });

  it('refuses compression methods it cannot decode, before writing anything', async () => {
    const zip = await scratch.craft('bzip2.zip', {
      entries: [
        { name: 'a.txt', data: 'a' },
        { name: 'b.txt', data: 'b'.repeat(100), method: 'bzip2' },
      ],
    });
    const dest = await scratch.dest();
    expect(await expectScanError(extract(zip, dest), 'NOT_A_ZIP')).toMatch(/compression method 12/);
    expect(await readdir(dest)).toEqual([]);
  });

  it('refuses to run into a folder that is not empty, and leaves it alone', async () => {
    const zip = await scratch.archive('small.zip', [{ name: 'a.txt', data: 'a' }]);
    const dest = await scratch.dest();
    await writeFile(path.join(dest, 'keep.txt'), 'keep');
    await expect(extract(zip, dest)).rejects.toThrow(/empty destination/);
    expect(await readdir(dest)).toEqual(['keep.txt']);
  });

  it('stops when the signal aborts, and removes what it wrote', async () => {
    const zip = await scratch.craft('slow.zip', {
      entries: Array.from({ length: 10 }, (_, i) => ({
        name: `f${i}.bin`,
        zeros: 4 * MiB,
        method: 'deflated' as const,
      })),
    });
    const dest = await scratch.dest();
    const controller = new AbortController();
    // Abort as soon as pass 2 has written its first file.
    const watcher = setInterval(() => {
      void readdir(dest).then((names) => {
        if (names.length > 0) controller.abort();
      });
    }, 1);
    try {
      await expect(
        // Zeros compress ~1000:1; the ratio limit is not what this test is about.
        extractZip({ zipPath: zip, destDir: dest, limits: { ...LIMITS, maxRatio: 10_000 }, signal: controller.signal }),
      ).rejects.toMatchObject({ name: 'AbortError' });
    } finally {
      clearInterval(watcher);
    }
    expect(controller.signal.aborted).toBe(true);
    expect(await readdir(dest)).toEqual([]);
  });

  it.runIf(existsSync('/proc/self/fd'))('closes the archive after success and after refusals', async () => {
    const good = await scratch.archive('fd-good.zip', [{ name: 'a/b.txt', data: 'b' }]);
    const overlap = await scratch.craft('fd-overlap.zip', {
      entries: [{ name: 'a.txt', data: 'a' }],
      patches: [{ op: 'duplicate', index: 0, name: 'b.txt' }],
    });
    const liar = await scratch.craft('fd-liar.zip', {
      entries: [{ name: 'a.txt', data: 'a'.repeat(100) }],
      patches: [{ op: 'shrink', index: 0, size: 10 }],
    });
    const openFds = async () => (await readdir('/proc/self/fd')).length;
    const before = await openFds();
    for (let round = 0; round < 5; round++) {
      await extract(good, await scratch.dest());
      await extract(overlap, await scratch.dest()).catch(() => undefined);
      await extract(liar, await scratch.dest()).catch(() => undefined);
    }
    await new Promise((resolve) => setTimeout(resolve, 50)); // fs.close completes asynchronously
    expect(await openFds()).toBeLessThanOrEqual(before);
  });

  it('does not start when the signal is already aborted', async () => {
    const zip = await scratch.archive('small2.zip', [{ name: 'a.txt', data: 'a' }]);
    const dest = await scratch.dest();
    await expect(
      extractZip({ zipPath: zip, destDir: dest, limits: LIMITS, signal: AbortSignal.abort() }),
    ).rejects.toMatchObject({ name: 'AbortError' });
    expect(await readdir(dest)).toEqual([]);
  });
});
