import { bytesOfShownName } from '../path-bytes.js';
import type { SourceInfo } from '../types.js';

// Each host family spells "this file at this ref" differently (docs/api.md, remote repositories).
const BLOB_SEGMENT = {
  github: 'blob',
  gitea: 'src/commit',
  gitlab: '-/blob',
  bitbucket: 'src',
} as const;

/** What encodeURIComponent leaves as it is. */
const UNRESERVED = /[A-Za-z0-9\-_.!~*'()]/;

/** A name percent-encoded from its bytes: a quoted one (path-bytes.ts) may hold bytes that are not UTF-8. */
function encodeName(name: string): string {
  if (!name.startsWith('"')) return encodeURIComponent(name);
  let encoded = '';
  for (const byte of bytesOfShownName(name)) {
    const ch = String.fromCharCode(byte);
    encoded += byte < 0x80 && UNRESERVED.test(ch) ? ch : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return encoded;
}

function encodePath(path: string): string {
  return path.split('/').map(encodeName).join('/');
}

/** The host's web link to `path` (repository-root-relative) at the scanned ref; `""` when there is none. */
export function buildFileUrl(source: SourceInfo, path: string): string {
  const base = fileUrlBase(source);
  return base === '' ? '' : base + encodePath(path);
}

/** What every link of `source` starts with, before the file's path; `""` when it has no links. */
export function fileUrlBase(source: SourceInfo): string {
  if (source.type !== 'remote' || !source.url || !source.hostFamily || !source.ref) return '';
  const segment =
    source.hostFamily === 'gitea' && source.ref !== source.commit ? 'src/branch' : BLOB_SEGMENT[source.hostFamily];
  return `${source.url}/${segment}/${encodePath(source.ref)}/`;
}
