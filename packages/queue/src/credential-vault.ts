import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { ScanError } from '@reposcan/contracts';

// A request's git credential, from the API that accepted the scan to the worker that clones it.
// The job payload is `{v, scan_id}` and the request on the volume says only that there was a
// credential; the credential itself waits here, for a bounded time, until the clone is done.
// On Redis it is sealed with AES-256-GCM under CREDENTIALS_KEY (which only the API and worker
// processes hold, in their environment): whoever reads Redis, its dumps or its replication
// stream gets ciphertext bound to one scan id. Embedded, it never leaves the process's memory.

export interface CredentialVault {
  /** Keeps `secret` for `scanId` for at most `ttlMs`. Rejects CREDENTIALS_KEY_MISSING when it cannot seal. */
  put(scanId: string, secret: string, ttlMs: number): Promise<void>;
  /** The secret; null when there is none (never given, deleted, or expired). */
  get(scanId: string): Promise<string | null>;
  /** Forgets it; nothing when there is none. */
  delete(scanId: string): Promise<void>;
}

/** Embedded mode: a map in this process, each entry dropped when its time is up. */
export function createMemoryCredentialVault(): CredentialVault {
  const entries = new Map<string, { secret: string; timer: NodeJS.Timeout }>();
  const drop = (scanId: string): void => {
    clearTimeout(entries.get(scanId)?.timer);
    entries.delete(scanId);
  };
  return {
    put(scanId, secret, ttlMs) {
      drop(scanId);
      const timer = setTimeout(() => entries.delete(scanId), ttlMs);
      timer.unref();
      entries.set(scanId, { secret, timer });
      return Promise.resolve();
    },
    get: (scanId) => Promise.resolve(entries.get(scanId)?.secret ?? null),
    delete: (scanId) => Promise.resolve(drop(scanId)),
  };
}

/** What the Redis vault needs of a client. */
export interface VaultRedis {
  set(key: string, value: string, px: 'PX', ttlMs: number): Promise<unknown>;
  get(key: string): Promise<string | null>;
  del(key: string): Promise<number>;
}

/**
 * On Redis, under `<prefix>:git-credential:<scan id>` with the TTL as Redis's own expiry. `key`
 * null (CREDENTIALS_KEY unset): nothing is ever stored, a request with a credential is refused.
 * `call` runs each command under the queue's deadline (a 503 when Redis is down).
 */
export function createRedisCredentialVault(o: {
  redis: VaultRedis;
  prefix: string;
  key: Buffer | null;
  call: <T>(operation: () => Promise<T>) => Promise<T>;
}): CredentialVault {
  const keyOf = (scanId: string): string => `${o.prefix}:git-credential:${scanId}`;
  return {
    async put(scanId, secret, ttlMs) {
      if (o.key === null) throw keyMissing();
      const sealed = sealSecret(o.key, scanId, secret);
      await o.call(() => o.redis.set(keyOf(scanId), sealed, 'PX', Math.max(1, Math.round(ttlMs))));
    },
    async get(scanId) {
      const sealed = await o.call(() => o.redis.get(keyOf(scanId)));
      if (sealed === null) return null;
      if (o.key === null)
        throw new ScanError(
          'REPO_AUTH_FAILED',
          'This worker cannot read the git token sent with the scan: its operator has not set CREDENTIALS_KEY on it (every API and worker process needs the same one).',
        );
      return openSealed(o.key, scanId, sealed);
    },
    async delete(scanId) {
      await o.call(() => o.redis.del(keyOf(scanId)));
    },
  };
}

function keyMissing(): ScanError {
  return new ScanError(
    'CREDENTIALS_KEY_MISSING',
    'This server does not take git tokens: its operator has not set CREDENTIALS_KEY. Scan public repositories, or ask the operator to set it.',
  );
}

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** The additional data: a sealed credential opens only for the scan it was sealed for. */
function boundTo(scanId: string): Buffer {
  return Buffer.from(`reposcan git credential ${scanId}`);
}

/** AES-256-GCM with a random 96-bit nonce: `v1.<iv>.<tag>.<ciphertext>`, each base64. */
export function sealSecret(key: Buffer, scanId: string, secret: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(boundTo(scanId));
  const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return [VERSION, iv, cipher.getAuthTag(), ciphertext]
    .map((part) => (typeof part === 'string' ? part : part.toString('base64')))
    .join('.');
}

/**
 * The secret `sealSecret` sealed for this scan; a changed byte, another scan's value or another
 * key throws REPO_AUTH_FAILED (the scan cannot authenticate; the message names the likely cause).
 */
export function openSealed(key: Buffer, scanId: string, sealed: string): string {
  try {
    const [version, iv, tag, ciphertext, ...rest] = sealed.split('.');
    if (version !== VERSION || rest.length > 0 || iv === undefined || tag === undefined || ciphertext === undefined)
      throw new Error('not a sealed credential');
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64'), { authTagLength: TAG_BYTES });
    decipher.setAAD(boundTo(scanId));
    decipher.setAuthTag(Buffer.from(tag, 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64')), decipher.final()]).toString('utf8');
  } catch {
    throw new ScanError(
      'REPO_AUTH_FAILED',
      'The git token sent with the scan could not be unsealed: the API and this worker must share one CREDENTIALS_KEY. Submit the scan again once they do.',
    );
  }
}
