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
  if (spec.scheme === 'http' && !policy.allowHttp) {
    throw new ScanError(
      'SCHEME_NOT_ALLOWED',
      'Only https URLs can be scanned on this server; use the https:// address of the repository.',
    );
  }
  if (spec.hasCredentials) {
    throw new ScanError(
      'CREDENTIALS_IN_URL',
      'Remove the user name and password or token from the URL (where it would be logged and stored); send a token for a private repository in git_token or the X-Git-Token header instead.',
    );
  }
  const isLiteral = net.isIP(spec.host) !== 0;
  if (!policy.allowPrivateHosts && ((isLiteral && isPrivateAddress(spec.host)) || isLocalhostName(spec.host))) {
    throw privateAddress(spec);
  }
  if (!isAllowedHost(spec, policy.allowedHosts)) {
    throw new ScanError('HOST_NOT_ALLOWED', `The host ${spec.host} is not in this server's list of allowed git hosts.`);
  }

  const addresses = isLiteral ? [spec.host] : await resolve(spec.host, deps);
  if (!policy.allowPrivateHosts && addresses.some(isPrivateAddress)) throw privateAddress(spec);
  return addresses;
}

/** RFC 6761: `localhost` and every name below it are loopback, whatever DNS says. */
function isLocalhostName(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost');
}

function isAllowedHost(spec: RemoteSpec, allowedHosts: RemotePolicy['allowedHosts']): boolean {
  if (allowedHosts === '*') return true;
  return allowedHosts.some((entry) => {
    const normalised = entry.trim().toLowerCase().replace(/\.$/, '');
    return normalised === spec.host || normalised === `${hostForUrl(spec.host)}:${spec.port}`;
  });
}

async function resolve(host: string, deps: RemotePolicyDeps): Promise<string[]> {
  let answers: LookupAddress[];
  try {
    answers = await deps.lookup(host, { all: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOTFOUND' || code === 'ENODATA') {
      throw new ScanError('REPO_NOT_FOUND', `The host ${host} does not exist; check the repository URL.`, {
        cause: error,
      });
    }
    throw new ScanError('CLONE_FAILED', `The host ${host} could not be resolved right now; try again later.`, {
      retryable: true,
      cause: error,
    });
  }
  const addresses = [...new Set(answers.map((answer) => answer.address))];
  if (addresses.length === 0 || !addresses.every((address) => net.isIP(address) !== 0)) {
    throw new ScanError('REPO_NOT_FOUND', `The host ${host} has no usable address; check the repository URL.`);
  }
  return addresses;
}

function privateAddress(spec: RemoteSpec): ScanError {
  return new ScanError(
    'PRIVATE_ADDRESS',
    `The host ${spec.host} is a private, loopback or link-local address, which this server does not clone from.`,
  );
}
