import { access, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeZipBundle } from '../../src/artifacts/write-zip-bundle.js';
import { PROVES_PATHS } from '../../src/io/proven-path.js';
import { readZip } from '../scan/read-zip.js';

let base = '';
beforeEach(async () => {
  base = await mkdtemp(join(tmpdir(), 'reposcan-bundle-'));
});
afterEach(() => rm(base, { recursive: true, force: true }));

describe.skipIf(!PROVES_PATHS)('assets in the bundle', () => {
  it('are read only from where the scan found them, never through a folder since swapped for a link', async () => {
    await mkdir(join(base, 'tree', 'img'), { recursive: true });
    await mkdir(join(base, 'outside'));
    await writeFile(join(base, 'tree', 'img', 'logo.png'), 'inside');
    await writeFile(join(base, 'outside', 'logo.png'), 'OUTSIDE');
    // `pics` was a folder of the tree when it was walked; it is now a link to outside.
    await symlink(join(base, 'outside'), join(base, 'tree', 'pics'));
    const bundle = (absPath: string, outPath: string) =>
      writeZipBundle({
        outPath,
        files: [],
        treeFiles: [{ path: 'logo.png', absPath }],
        documents: [],
        date: new Date(0),
      });

    await expect(bundle(join(base, 'tree', 'pics', 'logo.png'), join(base, 'swapped.zip'))).rejects.toMatchObject({
      code: 'EMOVED',
    });
    await bundle(join(base, 'tree', 'img', 'logo.png'), join(base, 'kept.zip'));
    expect((await readZip(join(base, 'kept.zip'))).get('repository/logo.png')?.toString()).toBe('inside');
  });
});

describe('the bundle’s own entries', () => {
  it('must be distinct names at the top, clear of repository/: anything else is refused before a byte is written', async () => {
    const outPath = join(base, 'refused.zip');
    const attempt = (names: string[]) =>
      writeZipBundle({
        outPath,
        files: [],
        treeFiles: [],
        documents: names.map((name) => ({ name, content: '' })),
        date: new Date(0),
      });
    await expect(attempt(['repository/README.md'])).rejects.toThrow(/at the top/);
    await expect(attempt(['repository'])).rejects.toThrow(/at the top/);
    await expect(attempt(['manifest.json'])).rejects.toThrow(/distinct/);
    await expect(attempt(['README.md', 'README.md'])).rejects.toThrow(/distinct/);
    await expect(access(outPath)).rejects.toThrow();
  });
});
