import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/index.js';
import {
  API_KEY_PREFIX,
  apiKeyRecord,
  formatApiKeyLine,
  generateApiKey,
  matchApiKey,
  parseApiKeyFile,
  parseApiKeyPairs,
} from '../src/api-keys.js';

describe('API keys', () => {
  it('a new key is the prefix and 32 random bytes in base64url, never the same twice', () => {
    const a = generateApiKey();
    const b = generateApiKey();
    expect(a).toMatch(/^rsk_[A-Za-z0-9_-]{43}$/);
    expect(a.startsWith(API_KEY_PREFIX)).toBe(true);
    expect(Buffer.from(a.slice(4), 'base64url')).toHaveLength(32);
    expect(a).not.toBe(b);
  });

  it('a line written for a key parses back to a record that matches that key and no other', () => {
    const key = generateApiKey();
    const line = formatApiKeyLine(apiKeyRecord('ci-bot', key, { admin: true, rate: 5, inspect: 7 }));
    expect(line).toMatch(/^ci-bot [A-Za-z0-9_-]{22}:[0-9a-f]{64} scope=admin rate=5 inspect=7$/);
    expect(line).not.toContain(key);
    expect(line).not.toContain(key.slice(4));
    const { keys, problems } = parseApiKeyFile(`# reposcan keys\n\n${line}\n`);
    expect(problems).toEqual([]);
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatchObject({ name: 'ci-bot', admin: true, rate: 5, inspect: 7 });
    expect(matchApiKey(keys, key)?.name).toBe('ci-bot');
    expect(matchApiKey(keys, generateApiKey())).toBeNull();
    expect(matchApiKey(keys, `${key}x`)).toBeNull();
    expect(matchApiKey(keys, '')).toBeNull();
  });

  it('one key salted twice gives two different lines, both matching it', () => {
    const key = generateApiKey();
    const one = apiKeyRecord('a', key);
    const two = apiKeyRecord('a', key);
    expect(one.hash).not.toBe(two.hash);
    expect(matchApiKey([one], key)).toBe(one);
    expect(matchApiKey([two], key)).toBe(two);
  });

  it('bad lines and repeated names are left out with their line numbers, never their text; the rest stay', () => {
    const good = formatApiKeyLine(apiKeyRecord('alice', generateApiKey()));
    const bad = formatApiKeyLine(apiKeyRecord('bob', generateApiKey()));
    const text = [
      good,
      'bob nohash',
      `${bad} colour=blue`,
      `carol ${bad.split(' ')[1]} rate=many`,
      '-dash abcdefghijklmnopqrstuv:' + '0'.repeat(64),
      formatApiKeyLine(apiKeyRecord('alice', generateApiKey())),
      '   # indented comment',
    ].join('\r\n');
    const { keys, problems } = parseApiKeyFile(text);
    expect(keys.map((k) => k.name)).toEqual(['alice']);
    expect(problems).toHaveLength(5);
    expect(problems[0]).toMatch(/^line 2: expected <salt>:<sha256-hex>/);
    expect(problems[1]).toMatch(/^line 3: "colour=blue" is not one of/);
    expect(problems[2]).toMatch(/^line 4: "rate=many"/);
    expect(problems[3]).toMatch(/^line 5: expected a key name/);
    expect(problems[4]).toMatch(/^line 6: the name alice is used by an earlier line/);
    for (const p of problems) expect(p).not.toMatch(/[0-9a-f]{64}/);
  });

  it('API_KEYS: name:key pairs, hashed as they are read; :admin marks an admin key', () => {
    const keys = parseApiKeyPairs('alice:abcdefghijklmnop1234, root:ZYXWVUTSRQPONMLKJIH:admin');
    if (typeof keys === 'string') throw new Error(keys);
    expect(keys.map((k) => [k.name, k.admin])).toEqual([
      ['alice', false],
      ['root', true],
    ]);
    expect(JSON.stringify(keys)).not.toContain('abcdefghijklmnop1234');
    expect(matchApiKey(keys, 'abcdefghijklmnop1234')?.name).toBe('alice');
    expect(matchApiKey(keys, 'ZYXWVUTSRQPONMLKJIH')?.name).toBe('root');
    expect(parseApiKeyPairs('alice:short')).toMatch(/at least 16 characters/);
    expect(parseApiKeyPairs('a:abcdefghijklmnop1234,a:abcdefghijklmnop5678')).toMatch(/a is given twice/);
    expect(parseApiKeyPairs('alice:abcdefghijklmnop1234:root')).toMatch(/name:key:admin/);
  });

  it('loadConfig hashes API_KEYS and never repeats a key in its error', () => {
    const config = loadConfig({ API_KEYS: 'alice:abcdefghijklmnop1234' }, { version: 't' });
    expect(config.apiKeys.map((k) => k.name)).toEqual(['alice']);
    expect(JSON.stringify(config)).not.toContain('abcdefghijklmnop1234');
    try {
      loadConfig({ API_KEYS: 'alice:abcdefghijklmnop1234,bob:tooshort' }, { version: 't' });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toContain('API_KEYS="***"');
      expect((error as Error).message).not.toContain('abcdefghijklmnop1234');
      expect((error as Error).message).not.toContain('tooshort');
    }
  });
});
