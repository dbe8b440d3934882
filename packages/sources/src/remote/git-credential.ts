import net from 'node:net';
import { ScanError } from '@reposcan/contracts';
import type { GitEnv } from './git-env.js';
import type { HostFamily, RemoteSpec } from './remote-spec.js';

/**
 * A git credential as a request or GIT_CREDENTIALS_FILE gives it: `token` or `user:token`. It
 * reaches git only as an `Authorization` header set through git's environment (never argv, the
 * URL or a file), and is scrubbed from whatever git prints.
 */
export interface GitCredential {
  /** null: the host's usual user name for a bare token (DEFAULT_GIT_USERNAMES). */
  readonly username: string | null;
  readonly password: string;
}

/**
 * The user name each host expects beside a bare token. GitHub: any token with `x-access-token`;
 * GitLab: personal, project and group tokens with `oauth2`; Bitbucket Cloud: repository,
 * project and workspace access tokens with `x-token-auth` (an app password needs the account's
 * own name: `user:app-password`); Gitea and Forgejo read the token whatever the name.
 */
export const DEFAULT_GIT_USERNAMES: Readonly<Record<HostFamily, string>> = {
  github: 'x-access-token',
  gitlab: 'oauth2',
  bitbucket: 'x-token-auth',
  gitea: 'x-access-token',
};

/** `token` or `user:token` (split at the first `:`); throws a 400 naming the form, never the value. */
export function parseGitCredential(text: string): GitCredential {
  const colon = text.indexOf(':');
  const credential =
    colon < 0
      ? { username: null, password: text }
      : { username: text.slice(0, colon), password: text.slice(colon + 1) };
  if (
    credential.password === '' ||
    credential.username === '' ||
    !/^[\x21-\x7e]+$/.test(text) // what a header can carry, and nothing git would read as a line break
  ) {
    throw new ScanError(
      'INVALID_REQUEST',
      'The git token must be a token or user:token, printable ASCII without blanks, neither part empty.',
    );
  }
  return credential;
}

/** Where a token may be sent: https, or plain http to a loopback address (a test's git server). */
export function assertCredentialTransport(spec: RemoteSpec): void {
  if (mayCarryCredential(spec)) return;
  throw new ScanError(
    'GIT_TOKEN_NOT_ACCEPTED',
    `A git token is sent over https only (${spec.host} would receive it in clear over http); use the repository's https:// URL.`,
  );
}

export function mayCarryCredential(spec: RemoteSpec): boolean {
  return spec.scheme === 'https' || isLoopback(spec.host);
}

function isLoopback(host: string): boolean {
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  return host === '::1' || (net.isIPv4(host) && host.startsWith('127.'));
}

/** Every form in which git (or a server it quotes) could print the credential. */
export function credentialForms(credential: GitCredential, spec: RemoteSpec): string[] {
  const username = credential.username ?? DEFAULT_GIT_USERNAMES[spec.hostFamily];
  const pair = `${username}:${credential.password}`;
  return [
    pair,
    credential.password,
    Buffer.from(pair).toString('base64'),
    Buffer.from(credential.password).toString('base64'),
    encodeURIComponent(credential.password),
  ];
}

/**
 * `gitEnv` with the credential as an `Authorization: Basic` header for every request git makes
 * (GIT_CONFIG_COUNT/KEY/VALUE: config through the environment, which no other process's argv
 * shows). git talks to this one host only (pinned addresses, redirects never followed), so the
 * header is not scoped by URL; a URL in a config key would also trip simple-git's config guard,
 * which matches its words anywhere in a key.
 */
export function withGitCredential(gitEnv: GitEnv, spec: RemoteSpec, credential: GitCredential): GitEnv {
  assertCredentialTransport(spec);
  const username = credential.username ?? DEFAULT_GIT_USERNAMES[spec.hostFamily];
  const basic = Buffer.from(`${username}:${credential.password}`).toString('base64');
  return {
    ...gitEnv,
    env: {
      ...gitEnv.env,
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'http.extraHeader',
      GIT_CONFIG_VALUE_0: `Authorization: Basic ${basic}`,
    },
    secrets: [...gitEnv.secrets, ...credentialForms(credential, spec)],
  };
}

/** `gitEnv` without the credential withGitCredential put in it: for git commands that read the clone alone. */
export function withoutGitCredential(gitEnv: GitEnv): GitEnv {
  const env = Object.fromEntries(
    Object.entries(gitEnv.env).filter(([key]) => !/^GIT_CONFIG_(COUNT|KEY_\d+|VALUE_\d+)$/.test(key)),
  );
  return { ...gitEnv, env, secrets: [] };
}

/** `text` with every secret replaced by `***`, longest first so a secret inside another goes too. */
export function scrubSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of [...secrets].sort((a, b) => b.length - a.length))
    if (secret.length > 0) out = out.replaceAll(secret, '***');
  return out;
}
