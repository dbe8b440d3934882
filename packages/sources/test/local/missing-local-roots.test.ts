import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '@reposcan/config';
import { checkSourcesAtStart, missingLocalRootsWarning } from '../../src/index.js';

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

  it('is what every process checks at start: a missing root warned of, an unusable credentials file refused', async () => {
    const warnings: string[] = [];
    const gone = join(dir, 'gone');
    await checkSourcesAtStart(loadConfig({ ALLOWED_LOCAL_ROOTS: `${dir}:${gone}` }), (m) => warnings.push(m));
    expect(warnings).toEqual([await missingLocalRootsWarning([gone])]);
    await expect(
      checkSourcesAtStart(loadConfig({ GIT_CREDENTIALS_FILE: join(dir, 'no-such-file') }), () => {}),
    ).rejects.toThrow();
    expect(warnings).toHaveLength(1);
  });
});
