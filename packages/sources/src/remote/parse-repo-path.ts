import net from 'node:net';
import { ScanError } from '@reposcan/contracts';
import { defaultPort, hostFamilyOf, hostForUrl } from './remote-spec.js';
import type { RemoteSpec } from './remote-spec.js';

export type ParsedRepoPath = { kind: 'remote'; url: RemoteSpec } | { kind: 'local'; path: string };

const MAX_INPUT_LENGTH = 4096;
// C0 controls, DEL and C1 controls: never part of a URL or a path a user means.
const CONTROL_CHARS = /\p{Cc}/u;
const WHITESPACE = /\s/;
const URL_WITH_SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//;
const SCP_ADDRESS = /^git@([A-Za-z0-9.-]+):([^:]+)$/;
const HOST_NAME = /^(?!-)[a-z0-9_-]+(\.[a-z0-9_-]+)*$/;
// Owner, group and repository names: what GitHub, GitLab, Gitea and Bitbucket allow.
const NAME_SEGMENT = /^(?!-)(?!\.{1,2}$)[A-Za-z0-9_.-]+$/;
const MAX_GROUP_DEPTH = 20;

const ACCEPTED_FORMS =
  'Use an https URL such as https://github.com/owner/repo, a git@host:owner/repo.git address, or an absolute local path.';

/**
 * Sorts a `repo_path` into a remote repository or a local path. Pure: no process, no network.
 * Refuses (400 INVALID_REPO_PATH) anything that is none of the accepted forms, and (403
 * SCHEME_NOT_ALLOWED) well-formed URLs of another scheme (`file://`, `ssh://`, `git://`, …).
 * Policy on http, hosts, credentials and addresses is `checkRemotePolicy`'s.
 */
export function parseRepoPath(input: string): ParsedRepoPath {
  if (input.length === 0 || input.length > MAX_INPUT_LENGTH)
    invalid(`repo_path must be 1 to ${MAX_INPUT_LENGTH} characters. ${ACCEPTED_FORMS}`);
  if (CONTROL_CHARS.test(input)) invalid(`repo_path contains control characters. ${ACCEPTED_FORMS}`);
  // Git never sees a local path, so ordinary spaces in folder names are fine there.
  if (input.startsWith('/')) return { kind: 'local', path: input };
  if (WHITESPACE.test(input)) invalid(`repo_path contains whitespace. ${ACCEPTED_FORMS}`);

  const scp = SCP_ADDRESS.exec(input);
  if (scp) return { kind: 'remote', url: parseWebUrl(`https://${scp[1]}/${scp[2]}`) };

  const scheme = URL_WITH_SCHEME.exec(input)?.[1]?.toLowerCase();
  if (scheme === undefined)
    invalid(`repo_path is not a URL, a git@host: address or an absolute path. ${ACCEPTED_FORMS}`);
  if (scheme !== 'https' && scheme !== 'http') {
    throw new ScanError(
      'SCHEME_NOT_ALLOWED',
      `${scheme}:// URLs are not accepted; only https (and http where the server allows it) can be scanned.`,
    );
  }
  return { kind: 'remote', url: parseWebUrl(input) };
}

function parseWebUrl(input: string): RemoteSpec {
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    invalid(`repo_path is not a valid URL. ${ACCEPTED_FORMS}`);
  }
  const scheme = url.protocol === 'http:' ? 'http' : 'https';
  const host = normaliseHost(url.hostname);
  const port = url.port === '' ? defaultPort(scheme) : Number(url.port);
  const segments = url.pathname.split('/').flatMap(decodeSegment);
  const hostFamily = hostFamilyOf(host);
  const parts = hostFamily === 'gitlab' ? splitGitLabPath(segments) : splitOwnerRepoPath(segments, hostFamily);

  const portPart = port === defaultPort(scheme) ? '' : `:${port}`;
  const webUrl = `${scheme}://${hostForUrl(host)}${portPart}/${[...parts.owner, parts.repo].join('/')}`;
  return {
    scheme,
    host,
    port,
    hasCredentials: url.username !== '' || url.password !== '',
    owner: parts.owner,
    repo: parts.repo,
    cloneUrl: `${webUrl}.git`,
    webUrl,
    hostFamily,
    refFromUrl: parts.refFromUrl,
    kindOfRef: parts.kindOfRef,
  };
}

/** WHATWG URL has already lower-cased, punycoded and turned `0x7f.1`-style IPv4 into dotted form. */
function normaliseHost(hostname: string): string {
  const bracketed = hostname.startsWith('[') && hostname.endsWith(']');
  const host = bracketed ? hostname.slice(1, -1) : hostname.replace(/\.$/, '');
  if (net.isIP(host) === 0 && !HOST_NAME.test(host)) invalid(`The URL's host name is not valid. ${ACCEPTED_FORMS}`);
  return host;
}

/** Percent-decodes one path segment; an encoded `/` (as in `feature%2Fx`) splits it. Empty parts drop out. */
function decodeSegment(segment: string): string[] {
  let decoded: string;
  try {
    decoded = decodeURIComponent(segment);
  } catch {
    invalid('The URL path has a malformed percent-escape.');
  }
  const parts = decoded.split('/').filter((part) => part !== '');
  if (parts.some((part) => part === '.' || part === '..' || part.includes('\\') || CONTROL_CHARS.test(part))) {
    invalid('The URL path has a segment that is not allowed (".", "..", a backslash or a control character).');
  }
  return parts;
}

interface PathParts {
  owner: string[];
  repo: string;
  refFromUrl: string[] | null;
  kindOfRef: 'tree' | 'blob' | null;
}

/** GitHub, Gitea, Bitbucket and unknown hosts: `/owner/repo[.git]` plus the host's ref forms. */
function splitOwnerRepoPath(segments: string[], family: RemoteSpec['hostFamily']): PathParts {
  const [owner, repoSegment, marker, ...rest] = segments;
  if (owner === undefined || repoSegment === undefined)
    invalid(`The URL must name an owner and a repository. ${ACCEPTED_FORMS}`);
  const base = { owner: [checkName(owner)], repo: repoName(repoSegment) };
  if (marker === undefined) return { ...base, refFromUrl: null, kindOfRef: null };

  if (family === 'bitbucket') {
    if (marker === 'src' && rest.length > 0) return { ...base, refFromUrl: rest, kindOfRef: 'tree' };
  } else if (marker === 'tree' && rest.length > 0) {
    return { ...base, refFromUrl: rest, kindOfRef: 'tree' };
  } else if (marker === 'blob' && rest.length > 1) {
    return { ...base, refFromUrl: rest, kindOfRef: 'blob' };
  } else if (family === 'gitea' && marker === 'src' && (rest[0] === 'branch' || rest[0] === 'tag') && rest.length > 1) {
    // What Gitea and Codeberg show in the address bar: /src/branch/<ref>[/<path>].
    return { ...base, refFromUrl: rest.slice(1), kindOfRef: 'tree' };
  }
  invalid(
    `This URL points at a page of the repository that cannot be scanned; use the repository URL or a /tree/<branch>/<folder> or /blob/<branch>/<file> link.`,
  );
}

/** GitLab: `/group/sub/…/repo[.git]`, then `/-/tree/<ref>[/<folder>]` or `/-/blob/<ref>/<file>`. */
function splitGitLabPath(segments: string[]): PathParts {
  const dash = segments.indexOf('-');
  const project = dash < 0 ? segments : segments.slice(0, dash);
  const repoSegment = project.at(-1);
  if (project.length < 2 || repoSegment === undefined)
    invalid(`The URL must name a group and a project. ${ACCEPTED_FORMS}`);
  if (project.length > MAX_GROUP_DEPTH + 1) invalid('The URL has more nested groups than GitLab allows.');
  const base = { owner: project.slice(0, -1).map(checkName), repo: repoName(repoSegment) };
  if (dash < 0) return { ...base, refFromUrl: null, kindOfRef: null };

  const [marker, ...rest] = segments.slice(dash + 1);
  if (marker === 'tree' && rest.length > 0) return { ...base, refFromUrl: rest, kindOfRef: 'tree' };
  if (marker === 'blob' && rest.length > 1) return { ...base, refFromUrl: rest, kindOfRef: 'blob' };
  invalid(
    `This URL points at a page of the project that cannot be scanned; use the project URL or a /-/tree/<branch>/<folder> or /-/blob/<branch>/<file> link.`,
  );
}

function repoName(segment: string): string {
  return checkName(segment.endsWith('.git') ? segment.slice(0, -'.git'.length) : segment);
}

function checkName(segment: string): string {
  if (!NAME_SEGMENT.test(segment))
    invalid('Owner, group and repository names may only contain letters, digits, ".", "_" and "-".');
  return segment;
}

function invalid(message: string): never {
  throw new ScanError('INVALID_REPO_PATH', message);
}
