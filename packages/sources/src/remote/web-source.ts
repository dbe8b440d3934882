import type { HostFamily, RemoteSpec } from './remote-spec.js';

/**
 * `SourceInfo` of @reposcan/core for a remote, spelled out here so this package does not
 * depend on the engine; it is assignable to `SourceInfo`.
 */
export interface RemoteSourceInfo {
  type: 'remote';
  url: string;
  hostFamily: HostFamily;
  ref: string | null;
  branch: string | null;
  commit: string | null;
  subdir: string | null;
}

/** The engine's view of a cloned remote: file links point at the commit when it is known. */
export function buildWebSource(
  spec: RemoteSpec,
  branch: string | null,
  commit: string | null,
  subdir: string | null,
): RemoteSourceInfo {
  return {
    type: 'remote',
    url: spec.webUrl,
    hostFamily: spec.hostFamily,
    ref: commit ?? branch,
    branch,
    commit,
    subdir,
  };
}
