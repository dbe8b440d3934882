import net from 'node:net';

/** Which URL grammar a host uses; the same union as `HostFamily` in @reposcan/core. */
export type HostFamily = 'github' | 'gitlab' | 'bitbucket' | 'gitea';

/** A remote repository named by a URL a user pasted, normalised. Never holds credentials. */
export interface RemoteSpec {
  scheme: 'https' | 'http';
  /** Lower-case host name (punycode, no trailing dot) or IP address (IPv6 without brackets). */
  host: string;
  /** Effective port: the URL's, else 443 / 80. */
  port: number;
  /** The URL carried `user[:password]@`; the values themselves are dropped here. */
  hasCredentials: boolean;
  /** Owner, or GitLab group path, one segment per element. */
  owner: string[];
  /** Repository name without `.git`. */
  repo: string;
  /** `https://host[:port]/group/sub/repo.git` */
  cloneUrl: string;
  /** `https://host[:port]/group/sub/repo`, the base of file links. */
  webUrl: string;
  hostFamily: HostFamily;
  /** Path segments after `tree`/`blob`/`-/tree`/`src`: a ref (which may contain `/`) then a folder or file; split by `resolveRef`. */
  refFromUrl: string[] | null;
  kindOfRef: 'tree' | 'blob' | null;
}

const DEFAULT_PORT = { https: 443, http: 80 } as const;

export function defaultPort(scheme: RemoteSpec['scheme']): number {
  return DEFAULT_PORT[scheme];
}

/** The host as it appears in a URL authority (IPv6 in brackets). */
export function hostForUrl(host: string): string {
  return net.isIPv6(host) ? `[${host}]` : host;
}

/** Which URL grammar (and file-link style) a host uses; unknown hosts get GitHub's. */
export function hostFamilyOf(host: string): HostFamily {
  if (host === 'github.com') return 'github';
  if (host === 'gitlab.com' || host.includes('gitlab')) return 'gitlab';
  if (host === 'bitbucket.org') return 'bitbucket';
  if (host === 'codeberg.org' || host === 'gitea.com' || host.includes('gitea') || host.includes('forgejo'))
    return 'gitea';
  return 'github';
}
