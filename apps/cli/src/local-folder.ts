import { realpath, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import type { SourceInfo } from '@reposcan/core';
import { UsageError } from './exit-codes.js';
import { classifyTarget } from './scan-target.js';

export interface LocalFolder {
  root: string;
  name: string;
  source: SourceInfo;
}

/** The folder a --local command reads, with the source block the engine's outputs carry. */
export async function resolveLocalFolder(target: string, cwd: string): Promise<LocalFolder> {
  const classified = await classifyTarget(target, cwd);
  if (classified.kind === 'remote')
    throw new UsageError('--local reads a folder on this machine; a repository URL needs a server (drop --local).');
  if (classified.kind === 'zip')
    throw new UsageError('--local reads a folder; send a .zip to a server instead (drop --local), or unpack it first.');
  const root = await realpath(classified.path).catch(() => null);
  const info = root === null ? null : await stat(root).catch(() => null);
  if (root === null || !info?.isDirectory())
    throw new UsageError(`no folder at ${classified.path}; give the path of the repository's folder.`);
  // Only this file of the sources package: its index loads git, zip and zod modules (~0.2 s).
  const { readGitHead } = await import('@reposcan/sources/read-git-head');
  return {
    root,
    name: basename(root) || root,
    source: {
      type: 'local',
      url: null,
      hostFamily: null,
      ref: null,
      branch: await readGitHead(root),
      commit: null,
      subdir: null,
    },
  };
}
