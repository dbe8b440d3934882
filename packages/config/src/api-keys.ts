// API keys: the key file's line format, hashing and matching. The API reads the file (API_KEYS_FILE)
// and the plain pairs of API_KEYS; `reposcan keys add|revoke` writes the file. No key is ever
// stored in clear: a line holds the key's name, a random salt and SHA-256(salt ‖ key).
//
// A plain salted SHA-256, not a slow password hash: a key made here is 32 random bytes, so
// guessing it from its hash means trying 2^256 values, however fast each try is. Slow hashes
// (scrypt, bcrypt) only help against guessable secrets, and would cost every request their delay.
// The salt keeps two deployments' lines for one key apart and defeats precomputed tables.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** Every key made by `reposcan keys add` starts with this, so a leaked one is recognisable (secret scanners, logs). */
export const API_KEY_PREFIX = 'rsk_';
/** A key's name: what scans are owned by and rate limits counted under; shown in logs, never secret. */
export const API_KEY_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
export const API_KEY_NAME_RULE = '1–64 letters, digits, ".", "_" or "-", starting with a letter or digit';
/** A plain key in API_KEYS: long enough to be unguessable, and free of the list's separators. */
const PLAIN_KEY = /^[A-Za-z0-9._~+/=-]{16,512}$/;
const SALT_BYTES = 16;
const HASH_HEX = /^[0-9a-f]{64}$/;
const SALT_TEXT = /^[A-Za-z0-9_-]{16,64}$/;

export interface ApiKeyRecord {
  readonly name: string;
  /** scope=admin: may read and delete every scan (also those made before keys were on), and the ops routes. */
  readonly admin: boolean;
  /** rate=N: scans and uploads per minute for this key, instead of RATE_LIMIT_PER_MINUTE. */
  readonly rate: number | null;
  /** inspect=N: previews per minute for this key, instead of INSPECT_RATE_LIMIT_PER_MINUTE. */
  readonly inspect: number | null;
  /** base64url of random bytes. Text, not Buffers: the configuration holding these is deeply frozen. */
  readonly salt: string;
  /** SHA-256 (hex) of the salt's bytes followed by the key's UTF-8 bytes. */
  readonly hash: string;
}

export interface ApiKeyOptions {
  admin?: boolean;
  rate?: number | null;
  inspect?: number | null;
}

/** A new key: the prefix and 32 random bytes, base64url (47 characters). */
export function generateApiKey(): string {
  return `${API_KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
}

export function hashApiKey(key: string, salt: string): Buffer {
  return createHash('sha256').update(Buffer.from(salt, 'base64url')).update(key, 'utf8').digest();
}

/** The record of `key` under `name`, with a fresh salt. */
export function apiKeyRecord(name: string, key: string, options: ApiKeyOptions = {}): ApiKeyRecord {
  const salt = randomBytes(SALT_BYTES).toString('base64url');
  return {
    name,
    admin: options.admin ?? false,
    rate: options.rate ?? null,
    inspect: options.inspect ?? null,
    salt,
    hash: hashApiKey(key, salt).toString('hex'),
  };
}

/** `<name> <salt>:<sha256-hex> [scope=admin] [rate=N] [inspect=N]`: one line of the key file. */
export function formatApiKeyLine(record: ApiKeyRecord): string {
  return [
    record.name,
    `${record.salt}:${record.hash}`,
    ...(record.admin ? ['scope=admin'] : []),
    ...(record.rate === null ? [] : [`rate=${record.rate}`]),
    ...(record.inspect === null ? [] : [`inspect=${record.inspect}`]),
  ].join(' ');
}

export interface ParsedKeyFile {
  keys: ApiKeyRecord[];
  /** One sentence per line that was not used, naming its line number (never its text: it holds a hash). */
  problems: string[];
}

/**
 * The records of a key file. Blank lines and `#` comments are skipped; a line that does not
 * parse, or repeats a name, is reported in `problems` and left out (the others stay in force).
 */
export function parseApiKeyFile(text: string): ParsedKeyFile {
  const keys: ApiKeyRecord[] = [];
  const problems: string[] = [];
  const names = new Set<string>();
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const parsed = parseLine(line);
    if (typeof parsed === 'string') problems.push(`line ${index + 1}: ${parsed}`);
    else if (names.has(parsed.name))
      problems.push(`line ${index + 1}: the name ${parsed.name} is used by an earlier line; names must be unique`);
    else {
      names.add(parsed.name);
      keys.push(parsed);
    }
  });
  return { keys, problems };
}

function parseLine(line: string): ApiKeyRecord | string {
  const [name = '', hashed = '', ...attributes] = line.split(/\s+/);
  if (!API_KEY_NAME.test(name)) return `expected a key name (${API_KEY_NAME_RULE}) first`;
  const [saltText = '', hex = '', extra] = hashed.split(':');
  if (extra !== undefined || !SALT_TEXT.test(saltText) || !HASH_HEX.test(hex))
    return 'expected <salt>:<sha256-hex> after the name, as `reposcan keys add` writes it';
  let admin = false;
  let rate: number | null = null;
  let inspect: number | null = null;
  for (const attribute of attributes) {
    const [key, value = ''] = attribute.split('=', 2);
    if (key === 'scope' && (value === 'admin' || value === 'user')) admin = value === 'admin';
    else if (key === 'rate' && /^\d{1,7}$/.test(value)) rate = Number(value);
    else if (key === 'inspect' && /^\d{1,7}$/.test(value)) inspect = Number(value);
    else return `"${attribute}" is not one of scope=admin, scope=user, rate=N, inspect=N`;
  }
  return { name, admin, rate, inspect, salt: saltText, hash: hex };
}

/**
 * API_KEYS: comma-separated `name:key` pairs (`name:key:admin` for an admin key), hashed as they
 * are read so the plain keys go no further than this function. Returns the records or a sentence.
 */
export function parseApiKeyPairs(text: string): ApiKeyRecord[] | string {
  const keys: ApiKeyRecord[] = [];
  for (const [index, pair] of text.split(',').entries()) {
    const [name = '', key = '', scope, extra] = pair.trim().split(':');
    if (!API_KEY_NAME.test(name)) return `name:key pairs, each name ${API_KEY_NAME_RULE} (pair ${index + 1})`;
    if (!PLAIN_KEY.test(key))
      return `name:key pairs, each key at least 16 characters of letters, digits and . _ ~ + / = - (the key of ${name}); make one with reposcan keys add`;
    if ((scope !== undefined && scope !== 'admin') || extra !== undefined)
      return `name:key or name:key:admin pairs (the pair of ${name})`;
    if (keys.some((k) => k.name === name)) return `unique names (${name} is given twice)`;
    keys.push(apiKeyRecord(name, key, { admin: scope === 'admin' }));
  }
  return keys;
}

/** The record `presented` is the key of, or null. Compares the hashes in constant time. */
export function matchApiKey(keys: readonly ApiKeyRecord[], presented: string): ApiKeyRecord | null {
  // Bounded before hashing: a key is short, and a huge header must not cost a hash per record.
  if (presented.length === 0 || presented.length > 512) return null;
  let found: ApiKeyRecord | null = null;
  for (const record of keys) {
    const hash = hashApiKey(presented, record.salt);
    if (timingSafeEqual(hash, Buffer.from(record.hash, 'hex')) && found === null) found = record;
  }
  return found;
}
