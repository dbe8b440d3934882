import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';

export type ScanTarget =
  { kind: 'remote'; repoPath: string } | { kind: 'folder'; path: string } | { kind: 'zip'; file: string };

// URLs and SCP-style addresses go to the server untouched; it decides what it accepts.
const REMOTE = /^(?:[a-z][a-z0-9+.-]*:\/\/|git@[^:/]+:)/i;

/**
 * What a target argument names: a repository URL (sent as repo_path), an existing .zip file
 * (uploaded), or a folder path, made absolute against the working directory.
 */
export async function classifyTarget(target: string, cwd: string): Promise<ScanTarget> {
  if (REMOTE.test(target)) return { kind: 'remote', repoPath: target };
  const path = resolve(cwd, target);
  if (/\.zip$/i.test(target)) {
    const info = await stat(path).catch(() => null);
    if (info?.isFile()) return { kind: 'zip', file: path };
  }
  return { kind: 'folder', path };
}
