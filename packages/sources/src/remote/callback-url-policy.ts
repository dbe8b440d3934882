import { ScanError } from '@reposcan/contracts';
import { checkHostPolicy } from './remote-policy.js';
import type { HostPolicyWording, RemotePolicy, RemotePolicyDeps } from './remote-policy.js';

// A webhook's callback URL goes through the same host rules as a git URL (remote-policy.ts):
// checked at submit, and again before every delivery, whose connection then goes to the
// address checked here (DNS may have changed since the submit).

const WEBHOOK_WORDING: HostPolicyWording = {
  httpRefused:
    'callback_url must be an https URL on this server (WEBHOOK_ALLOW_HTTP is off); use the https:// address of your receiver.',
  credentialsRefused:
    'Remove the user name and password from callback_url; deliveries are signed (X-Reposcan-Signature) instead.',
  privateAddress: (host) =>
    `The callback_url host ${host} is a private, loopback or link-local address, which this server does not deliver to (WEBHOOK_ALLOW_PRIVATE_HOSTS is off).`,
  hostNotAllowed: (host) =>
    `The callback_url host ${host} is not in this server's list of webhook hosts (WEBHOOK_ALLOWED_HOSTS).`,
  noSuchHost: (host, cause) =>
    new ScanError('INVALID_CALLBACK_URL', `The callback_url host ${host} does not exist; check the URL.`, { cause }),
  unresolved: (host, cause) =>
    new ScanError(
      'INVALID_CALLBACK_URL',
      `The callback_url host ${host} could not be resolved right now; try again later.`,
      {
        retryable: true,
        cause,
      },
    ),
};

export interface CheckedCallbackUrl {
  url: URL;
  /** Where the delivery connects: the addresses the host resolved to, checked. */
  addresses: string[];
}

/** Parses and checks a callback URL against the webhook policy; refusals are ScanErrors with 4xx codes. */
export async function checkCallbackUrl(
  text: string,
  policy: RemotePolicy,
  deps?: RemotePolicyDeps,
): Promise<CheckedCallbackUrl> {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ScanError(
      'INVALID_CALLBACK_URL',
      'callback_url is not a valid absolute URL (a scheme, a host and a port up to 65535); give one such as https://ci.example.com/hooks/reposcan.',
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new ScanError(
      'SCHEME_NOT_ALLOWED',
      `callback_url must be an ${policy.allowHttp ? 'https or http' : 'https'} URL, not ${url.protocol.replace(/:$/, '')}.`,
    );
  const scheme = url.protocol === 'https:' ? 'https' : 'http';
  // URL keeps IPv6 in brackets and a trailing dot: the host rules take neither.
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
  const port = url.port === '' ? (scheme === 'https' ? 443 : 80) : Number(url.port);
  const addresses = await checkHostPolicy(
    { scheme, host, port, hasCredentials: url.username !== '' || url.password !== '' },
    policy,
    WEBHOOK_WORDING,
    deps,
  );
  return { url, addresses };
}
