import type { SourceInfo } from '../types.js';

// Each host family spells "this file at this ref" differently (docs/api.md, remote repositories).
const BLOB_SEGMENT = {
  github: 'blob',
  gitea: 'src/commit',
  gitlab: '-/blob',
  bitbucket: 'src',
} as const;

function encodePath(path: string): string {
  return path.split('/').map(encodeURIComponent).join('/');
}

/** The host's web link to `path` (repository-root-relative) at the scanned ref; `""` when there is none. */
export function buildFileUrl(source: SourceInfo, path: string): string {
  if (source.type !== 'remote' || !source.url || !source.hostFamily || !source.ref) return '';
  const segment =
    source.hostFamily === 'gitea' && source.ref !== source.commit ? 'src/branch' : BLOB_SEGMENT[source.hostFamily];
  return `${source.url}/${segment}/${encodePath(source.ref)}/${encodePath(path)}`;
}
