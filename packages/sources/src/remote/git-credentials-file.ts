import { readFile } from 'node:fs/promises';
import { ConfigError } from '@reposcan/config';
import net from 'node:net';
import { parseGitCredential } from './git-credential.js';
import type { GitCredential } from './git-credential.js';
import { hostForUrl } from './remote-spec.js';
import type { RemoteSpec } from './remote-spec.js';

/** GIT_CREDENTIALS_FILE, parsed: `host` (any port) or `host:port` (IPv6 as `[::1]:port`) → credential. */
export type GitCredentials = ReadonlyMap<string, GitCredential>;

/** A line of GIT_CREDENTIALS_FILE is wrong; the message names the line, never its token. */
export class GitCredentialsFileError extends Error {
  override readonly name = 'GitCredentialsFileError';
}

const HOST = /^(?:\[[0-9a-f:.]+\]|[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?)(?::\d{1,5})?$/;

/**
 * One credential per line, `<host>[:port] <token>` or `<host>[:port] <user>:<token>`; blank lines
 * and lines starting with `#` are skipped. A host named twice is an error: which line wins would
 * be a guess.
 */
export function parseGitCredentials(text: string, source = 'GIT_CREDENTIALS_FILE'): GitCredentials {
  const credentials = new Map<string, GitCredential>();
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const where = `${source} line ${index + 1}`;
    const fields = line.split(/\s+/);
    if (fields.length !== 2)
      throw new GitCredentialsFileError(`${where}: expected "<host>[:port] <token>" or "<host>[:port] <user>:<token>"`);
    const host = normaliseHost(fields[0] as string);
    if (host === null) throw new GitCredentialsFileError(`${where}: "${fields[0]}" is not a host name or host:port`);
    if (credentials.has(host)) throw new GitCredentialsFileError(`${where}: ${host} was already given a credential`);
    try {
      credentials.set(host, parseGitCredential(fields[1] as string));
    } catch {
      throw new GitCredentialsFileError(`${where}: the credential must be a token or user:token, neither part empty`);
    }
  });
  return credentials;
}

function normaliseHost(text: string): string | null {
  const host = text.toLowerCase().replace(/\.(?=:\d+$|$)/, '');
  if (!HOST.test(host)) return null;
  const bracketed = /^\[(.+)\]/.exec(host)?.[1];
  return bracketed === undefined || net.isIPv6(bracketed) ? host : null;
}

/** The credential for `spec`: its `host:port` line first, then its host's. */
export function credentialFor(credentials: GitCredentials, spec: RemoteSpec): GitCredential | null {
  return credentials.get(`${hostForUrl(spec.host)}:${spec.port}`) ?? credentials.get(hostForUrl(spec.host)) ?? null;
}

/**
 * Reads and parses the file, at every clone: a rotated token applies from the next scan on, with
 * no restart. A file that cannot be read or parsed throws GitCredentialsFileError.
 */
export async function readGitCredentials(file: string): Promise<GitCredentials> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new GitCredentialsFileError(
      `GIT_CREDENTIALS_FILE ${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  return parseGitCredentials(text);
}

/**
 * At a process's start: a GIT_CREDENTIALS_FILE that cannot be read or parsed stops it with a
 * ConfigError naming the line, rather than failing scans later. Read again at every clone.
 */
export async function checkGitCredentialsFile(file: string | null): Promise<void> {
  if (file === null) return;
  try {
    await readGitCredentials(file);
  } catch (error) {
    if (error instanceof GitCredentialsFileError) throw new ConfigError([error.message]);
    throw error;
  }
}
