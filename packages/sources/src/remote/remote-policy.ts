import dns from 'node:dns';
import type { LookupAddress } from 'node:dns';
import net from 'node:net';
import { ScanError } from '@reposcan/contracts';
import { isPrivateAddress } from './private-address.js';
import { hostForUrl } from './remote-spec.js';
import type { RemoteSpec } from './remote-spec.js';

export interface RemotePolicy {
  /** Host names (any port) or `host:port` entries; `'*'` = any public host. */
  allowedHosts: readonly string[] | '*';
  allowHttp: boolean;
  allowPrivateHosts: boolean;
}

export interface RemotePolicyDeps {
  lookup: (hostname: string, options: { all: true }) => Promise<LookupAddress[]>;
}

const defaultDeps: RemotePolicyDeps = { lookup: (hostname, options) => dns.promises.lookup(hostname, options) };

/** What a host check needs of a URL: `RemoteSpec` for git, a callback URL for webhooks. */
export interface HostTarget {
  scheme: 'https' | 'http';
  /** Lower-case host name or IP address (IPv6 without brackets). */
  host: string;
  port: number;
  hasCredentials: boolean;
}

/** The sentences of each refusal, worded for what the URL is for (a clone, a webhook). */
export interface HostPolicyWording {
  httpRefused: string;
  credentialsRefused: string;
  privateAddress: (host: string) => string;
  hostNotAllowed: (host: string) => string;
  /** The name does not resolve (ENOTFOUND), or to nothing usable. */
  noSuchHost: (host: string, cause?: unknown) => ScanError;
  /** DNS failed for now (a timeout, SERVFAIL). */
  unresolved: (host: string, cause: unknown) => ScanError;
}

const GIT_WORDING: HostPolicyWording = {
  httpRefused: 'Only https URLs can be scanned on this server; use the https:// address of the repository.',
  credentialsRefused:
    'Remove the user name and password or token from the URL (where it would be logged and stored); send a token for a private repository in git_token or the X-Git-Token header instead.',
  privateAddress: (host) =>
    `The host ${host} is a private, loopback or link-local address, which this server does not clone from (GIT_ALLOW_PRIVATE_HOSTS is off); scan a repository on a public host, or ask the operator to allow private hosts.`,
  hostNotAllowed: (host) =>
    `The host ${host} is not in this server's list of allowed git hosts (GIT_ALLOWED_HOSTS); scan a repository on one of those hosts, or ask the operator to add ${host}.`,
  noSuchHost: (host, cause) =>
    new ScanError('REPO_NOT_FOUND', `The host ${host} does not exist; check the repository URL.`, { cause }),
  unresolved: (host, cause) =>
    new ScanError('CLONE_FAILED', `The host ${host} could not be resolved right now; try again later.`, {
      retryable: true,
      cause,
    }),
};

/**
 * Decides whether `spec` may be cloned and returns the addresses git must connect to (DNS
 * pinned, so a name cannot resolve elsewhere by the time git connects). Refuses with 403 codes;
 * nothing but the DNS lookup happens before a refusal.
 */
export async function checkRemotePolicy(
  spec: RemoteSpec,
  policy: RemotePolicy,
  deps: RemotePolicyDeps = defaultDeps,
): Promise<string[]> {
  return await checkHostPolicy(spec, policy, GIT_WORDING, deps);
}

/**
 * The host rules shared by git sources and webhook callbacks: scheme, no credentials, the list
 * of allowed hosts, and no private, loopback or link-local address (literal, `localhost`, or
 * any address the name resolves to) unless allowed. Returns the addresses to connect to.
 */
export async function checkHostPolicy(
  target: HostTarget,
  policy: RemotePolicy,
  wording: HostPolicyWording,
  deps: RemotePolicyDeps = defaultDeps,
): Promise<string[]> {
  if (target.scheme === 'http' && !policy.allowHttp) throw new ScanError('SCHEME_NOT_ALLOWED', wording.httpRefused);
  if (target.hasCredentials) throw new ScanError('CREDENTIALS_IN_URL', wording.credentialsRefused);
  const isLiteral = net.isIP(target.host) !== 0;
  const privateAddress = (): ScanError => new ScanError('PRIVATE_ADDRESS', wording.privateAddress(target.host));
  if (!policy.allowPrivateHosts && ((isLiteral && isPrivateAddress(target.host)) || isLocalhostName(target.host))) {
    throw privateAddress();
  }
  if (!isAllowedHost(target, policy.allowedHosts))
    throw new ScanError('HOST_NOT_ALLOWED', wording.hostNotAllowed(target.host));

  const addresses = isLiteral ? [target.host] : await resolve(target.host, deps, wording);
  if (!policy.allowPrivateHosts && addresses.some(isPrivateAddress)) throw privateAddress();
  return addresses;
}

/** RFC 6761: `localhost` and every name below it are loopback, whatever DNS says. */
function isLocalhostName(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost');
}

function isAllowedHost(spec: HostTarget, allowedHosts: RemotePolicy['allowedHosts']): boolean {
  if (allowedHosts === '*') return true;
  return allowedHosts.some((entry) => {
    const normalised = entry.trim().toLowerCase().replace(/\.$/, '');
    return normalised === spec.host || normalised === `${hostForUrl(spec.host)}:${spec.port}`;
  });
}

async function resolve(host: string, deps: RemotePolicyDeps, wording: HostPolicyWording): Promise<string[]> {
  let answers: LookupAddress[];
  try {
    answers = await deps.lookup(host, { all: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOTFOUND' || code === 'ENODATA') throw wording.noSuchHost(host, error);
    throw wording.unresolved(host, error);
  }
  const addresses = [...new Set(answers.map((answer) => answer.address))];
  if (addresses.length === 0 || !addresses.every((address) => net.isIP(address) !== 0)) {
    throw wording.noSuchHost(host);
  }
  return addresses;
}
