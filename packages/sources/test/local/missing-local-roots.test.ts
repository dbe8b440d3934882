import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { missingLocalRootsWarning } from '../../src/index.js';

describe('missingLocalRootsWarning', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'reposcan-roots-'));
    await writeFile(join(dir, 'a-file'), 'x');
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('says nothing when every root is a folder, or there are none', async () => {
    expect(await missingLocalRootsWarning([dir])).toBeNull();
    expect(await missingLocalRootsWarning(null)).toBeNull();
  });

  it('names each root that is missing or not a folder, such as a comma list read as one path', async () => {
    const commaList = `${dir},/srv`;
    expect(await missingLocalRootsWarning([dir, commaList])).toBe(
      `ALLOWED_LOCAL_ROOTS names a path that is not a folder here (${commaList}); local paths under it are refused (the list is ":"-separated)`,
    );
    expect(await missingLocalRootsWarning([join(dir, 'a-file'), join(dir, 'gone')])).toBe(
      `ALLOWED_LOCAL_ROOTS names paths that are not a folder here (${join(dir, 'a-file')}, ${join(dir, 'gone')}); local paths under them are refused (the list is ":"-separated)`,
    );
  });
});
