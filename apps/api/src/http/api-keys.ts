import { createHash } from 'node:crypto';
import type { Stats } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import type { Request, RequestHandler, Response } from 'express';
import { ConfigError, matchApiKey, parseApiKeyFile } from '@reposcan/config';
import type { ApiKeyRecord } from '@reposcan/config';
import { ScanError } from '@reposcan/contracts';
import type { Logger } from '@reposcan/runtime';

/** Who sent a request, when API keys are on: the name of the key it carried and what the key may do. */
export interface Caller {
  readonly name: string;
  readonly admin: boolean;
  readonly rate: number | null;
  readonly inspect: number | null;
}

/** The challenge of every 401 (RFC 6750); a browser asked for an ops route also gets a Basic one. */
export const BEARER_CHALLENGE = 'Bearer realm="reposcan"';
const BASIC_CHALLENGE = 'Basic realm="reposcan", charset="UTF-8"';

/**
 * The API keys in force: API_KEYS (fixed) and API_KEYS_FILE, read again as soon as the file is
 * not the one read last (inode, size, mtime or ctime differ). Each request costs one stat of the
 * file (about 10 µs of waiting on the thread pool here, no CPU to speak of), so a key revoked in any way, by `reposcan keys revoke`,
 * an editor or a config-management tool, is refused by every API process at its next request.
 */
export class ApiKeyRing {
  private fileKeys: readonly ApiKeyRecord[] = [];
  private stamp = '';
  private reading: Promise<void> | null = null;
  /**
   * Keys recognised since the file was last read, by their SHA-256: a salted record must be
   * hashed with its own salt, so finding a key costs a hash per key in force (1.3 µs each here);
   * a repeat request costs one. Emptied on every reload, so a revoked key is never found here.
   */
  private readonly known = new Map<string, ApiKeyRecord>();

  private constructor(
    private readonly file: string | null,
    private readonly fixed: readonly ApiKeyRecord[],
    private readonly log: Logger,
  ) {}

  /** null when no key is configured: the API is open, as without this feature. Throws ConfigError on a bad file. */
  static async open(o: {
    file: string | null;
    fixed: readonly ApiKeyRecord[];
    log: Logger;
  }): Promise<ApiKeyRing | null> {
    if (o.file === null && o.fixed.length === 0) return null;
    const ring = new ApiKeyRing(o.file, o.fixed, o.log);
    if (o.file !== null) {
      const problems = await ring.reload(true);
      const clash = ring.fileKeys.filter((k) => o.fixed.some((f) => f.name === k.name)).map((k) => k.name);
      if (clash.length > 0) problems.push(`${clash.join(', ')} also named in API_KEYS; every key needs its own name`);
      if (problems.length > 0) throw new ConfigError(problems.map((p) => `API_KEYS_FILE=${o.file}: ${p}`));
    }
    return ring;
  }

  /** The key `presented` is, or null (unknown or revoked). */
  async identify(presented: string): Promise<ApiKeyRecord | null> {
    await this.fresh();
    const digest = createHash('sha256').update(presented).digest('base64url');
    const seen = this.known.get(digest);
    if (seen) return seen;
    const found = matchApiKey(this.fixed, presented) ?? matchApiKey(this.fileKeys, presented);
    if (found) {
      if (this.known.size >= KNOWN_KEYS) this.known.clear();
      this.known.set(digest, found);
    }
    return found;
  }

  /** Names in force now (tests, logs): never a key. */
  async names(): Promise<string[]> {
    await this.fresh();
    return [...this.fixed, ...this.fileKeys].map((k) => k.name);
  }

  private async fresh(): Promise<void> {
    if (this.file === null) return;
    // One reload at a time; requests arriving meanwhile wait for it rather than read again.
    while (this.reading) await this.reading;
    const now = await stat(this.file).then(stampOf, () => 'missing');
    if (now === this.stamp) return;
    this.reading = this.reload(false).then(
      () => {
        this.reading = null;
      },
      () => {
        this.reading = null;
      },
    );
    await this.reading;
  }

  /**
   * Reads the file through one descriptor, so the stamp describes the bytes read (a rename
   * replacing the file meanwhile is seen at the next request). On a reload a bad line costs that
   * line only and a missing file every key of it: both logged, naming line numbers, never a hash.
   */
  private async reload(first: boolean): Promise<string[]> {
    const file = this.file as string;
    let handle;
    try {
      handle = await open(file, 'r');
    } catch (error) {
      this.fileKeys = [];
      this.known.clear();
      this.stamp = 'missing';
      const message = `cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)}); no key of it is accepted`;
      if (first) return [message];
      this.log.error({ file }, `API_KEYS_FILE ${message}`);
      return [];
    }
    try {
      const stamp = stampOf(await handle.stat());
      const { keys, problems } = parseApiKeyFile(await handle.readFile('utf8'));
      this.fileKeys = keys;
      this.known.clear();
      this.stamp = stamp;
      if (!first) {
        if (problems.length > 0) this.log.warn({ file, problems }, 'API_KEYS_FILE: lines left out');
        this.log.info({ file, keys: keys.length }, 'API_KEYS_FILE read again');
      }
      return problems;
    } finally {
      await handle.close();
    }
  }
}

/** Recognised keys remembered at most (a few hundred bytes each). */
const KNOWN_KEYS = 10_000;

function stampOf(s: Stats): string {
  return `${s.dev}:${s.ino}:${s.size}:${s.mtimeMs}:${s.ctimeMs}`;
}

const callers = new WeakMap<Request, Caller>();

/** The key a request was let in with; null when API keys are off (then anyone may do anything, as before). */
export function callerOf(req: Request): Caller | null {
  return callers.get(req) ?? null;
}

/** The key in `Authorization: Bearer <key>`; with `basic`, also the password of `Basic` (a browser's prompt). */
function presentedKey(req: Request, basic: boolean): string | null {
  const header = req.get('authorization') ?? '';
  // Whatever follows `Bearer` is the key as sent: a mangled one is refused as invalid, not missing.
  const bearer = /^Bearer[ \t]+(.+)$/i.exec(header);
  if (bearer) return (bearer[1] ?? '').trim();
  if (basic) {
    const match = /^Basic[ \t]+([A-Za-z0-9+/=]+)[ \t]*$/i.exec(header);
    if (match) {
      const decoded = Buffer.from(match[1] ?? '', 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      return colon === -1 ? null : decoded.slice(colon + 1);
    }
  }
  return null;
}

/**
 * Lets a request in only with a key in force; `admin`: only with a key of scope=admin (the ops
 * routes). Mounted on /v1 (and on /metrics and the queue dashboard with PROTECT_OPS_ROUTES).
 */
export function requireApiKey(ring: ApiKeyRing, o: { admin: boolean }): RequestHandler {
  const challenge = o.admin ? [BEARER_CHALLENGE, BASIC_CHALLENGE] : BEARER_CHALLENGE;
  return (req, res, next) => {
    const presented = presentedKey(req, o.admin);
    if (presented === null) {
      refuse(res, challenge);
      return next(
        new ScanError(
          'API_KEY_MISSING',
          'This server needs an API key: send it as the header `Authorization: Bearer <key>` (the CLI: --api-key or REPOSCAN_API_KEY; the page: the API key field). Ask the operator for a key if you have none.',
        ),
      );
    }
    ring.identify(presented).then(
      (key) => {
        if (key === null) {
          refuse(res, o.admin ? challenge : `${BEARER_CHALLENGE}, error="invalid_token"`);
          return next(
            new ScanError(
              'API_KEY_INVALID',
              'The API key was not accepted: it is unknown or has been revoked. Check that you send the whole key, or ask the operator for a new one.',
            ),
          );
        }
        if (o.admin && !key.admin)
          return next(
            new ScanError(
              'ADMIN_KEY_REQUIRED',
              `The key ${key.name} may use the API but not this operator route; use a key with scope=admin.`,
            ),
          );
        callers.set(req, { name: key.name, admin: key.admin, rate: key.rate, inspect: key.inspect });
        next();
      },
      (error: unknown) => next(error),
    );
  };
}

function refuse(res: Response, challenge: string | string[]): void {
  res.setHeader('WWW-Authenticate', challenge);
}
