import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { GitTokenArg } from './cli-args.js';
import { UsageError } from './exit-codes.js';

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

/**
 * The git token to send for `target`: a remote repository's. --git-token with a folder or a
 * .zip is a mistake; REPOSCAN_GIT_TOKEN set in the environment is simply not sent.
 */
export function gitTokenFor(target: ScanTarget, token: GitTokenArg | undefined): string | undefined {
  if (token === undefined) return undefined;
  if (target.kind === 'remote') return token.value;
  if (token.from === '--git-token')
    throw new UsageError('--git-token is for a private remote repository; a folder or a .zip clones nothing.');
  return undefined;
}
