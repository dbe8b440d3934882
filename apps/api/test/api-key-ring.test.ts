// The keys the API accepts from API_KEYS_FILE as the file changes under it: a hand edit, a
// line gone bad, the file deleted. (Revocation through the CLI across processes: api-keys.e2e.)
import { mkdtemp, rm, writeFile, rename } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { apiKeyRecord, ConfigError, formatApiKeyLine, generateApiKey } from '@reposcan/config';
import { createLogger } from '@reposcan/runtime';
import { ApiKeyRing } from '../src/http/api-keys.js';

const log = createLogger('silent', 'test');

describe('ApiKeyRing', () => {
  let dir: string;
  let file: string;
  const alice = generateApiKey();
  const bob = generateApiKey();
  const aliceLine = formatApiKeyLine(apiKeyRecord('alice', alice));
  const bobLine = formatApiKeyLine(apiKeyRecord('bob', bob, { admin: true, rate: 2 }));

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'reposcan-ring-'));
    file = join(dir, 'keys');
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('no file and no API_KEYS: no ring, the API stays open', async () => {
    expect(await ApiKeyRing.open({ file: null, fixed: [], log })).toBeNull();
  });

  it('a missing or bad file at start is a ConfigError naming the line, never its hash', async () => {
    await expect(ApiKeyRing.open({ file, fixed: [], log })).rejects.toThrow(ConfigError);
    await writeFile(file, `${aliceLine}\nbob ${aliceLine.split(' ')[1]} scope=root\n`);
    const error: unknown = await ApiKeyRing.open({ file, fixed: [], log }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect(String(error)).toContain('line 2');
    expect(String(error)).not.toContain(aliceLine.split(' ')[1]);
    await writeFile(file, `${aliceLine}\n`);
    const clash = await ApiKeyRing.open({ file, fixed: [apiKeyRecord('alice', bob)], log }).catch((e: unknown) => e);
    expect(String(clash)).toContain('alice also named in API_KEYS');
  });

  it('follows the file: a key added, one whose line goes bad, the file replaced, the file deleted', async () => {
    await writeFile(file, `${aliceLine}\n`);
    const fixed = apiKeyRecord('env', 'an-env-key-0123456789');
    const ring = await ApiKeyRing.open({ file, fixed: [fixed], log });
    if (!ring) throw new Error('expected keys');
    expect((await ring.identify(alice))?.name).toBe('alice');
    expect(await ring.identify(bob)).toBeNull();

    // Edited in place (same inode): the size and mtime change.
    await writeFile(file, `${aliceLine}\n${bobLine}\n`);
    expect(await ring.identify(bob)).toMatchObject({ name: 'bob', admin: true, rate: 2 });

    // A line broken by hand costs that line only.
    await writeFile(file, `${aliceLine}\n${bobLine} oops\n`);
    expect(await ring.identify(bob)).toBeNull();
    expect((await ring.identify(alice))?.name).toBe('alice');

    // Replaced by a rename, as `reposcan keys revoke` does.
    await writeFile(join(dir, 'next'), `${bobLine}\n`);
    await rename(join(dir, 'next'), file);
    expect(await ring.identify(alice)).toBeNull();
    expect((await ring.identify(bob))?.name).toBe('bob');

    // Gone: none of its keys; API_KEYS's still work.
    await rm(file);
    expect(await ring.identify(bob)).toBeNull();
    expect((await ring.identify('an-env-key-0123456789'))?.name).toBe('env');
    expect(await ring.names()).toEqual(['env']);
  });
});
