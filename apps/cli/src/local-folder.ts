import { realpath, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import type { GitWorkTree, SourceInfo } from '@reposcan/core';
import { UsageError } from './exit-codes.js';
import { classifyTarget } from './scan-target.js';

export interface LocalFolder {
  /** The folder's real path. */
  root: string;
  name: string;
  /** Where the walk starts: the top of the git work tree the folder lies in (`source.subdir` below it), or the folder. */
  walkRoot: string;
  source: SourceInfo;
  /** The work tree's tracked files and `.git/info/exclude`. */
  git?: GitWorkTree;
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
  // Only these files of the sources package: its index loads git, zip and zod modules (~0.2 s).
  const [{ readGitHead }, { readWorkTree }] = await Promise.all([
    import('@reposcan/sources/read-git-head'),
    import('@reposcan/sources/read-work-tree'),
  ]);
  // On the user's own machine any work tree above the folder counts, as it does for git.
  const tree = await readWorkTree(root, '/');
  return {
    root,
    name: basename(root) || root,
    walkRoot: tree?.top ?? root,
    source: {
      type: 'local',
      url: null,
      hostFamily: null,
      ref: null,
      branch: await readGitHead(tree?.top ?? root),
      commit: null,
      subdir: tree?.subdir ?? null,
    },
    ...(tree ? { git: { tracked: tree.tracked, infoExclude: tree.infoExclude } } : {}),
  };
}
