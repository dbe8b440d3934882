// The folder the walk starts from: the repository root, or a subdir of it reached without
// following links, carrying the ignore rules of the root and of every folder on the way.
import { join } from 'node:path';
import type { SkippedPath } from '../types.js';
import { IGNORE_FILE_NAMES, loadFolderRules } from './ignore-files.js';
import { EMPTY_IGNORE_STACK, enterFolder, withFolderRules } from './ignore-stack.js';
import type { Folder, WalkContext } from './walk-context.js';
import { joinRel } from './walk-context.js';

export type ScanRootErrorCode = 'ROOT_NOT_A_DIRECTORY' | 'ROOT_UNREADABLE' | 'SUBDIR_INVALID' | 'SUBDIR_NOT_FOUND';

/** The walk cannot start: nothing was scanned. Messages hold no absolute path. */
export class ScanRootError extends Error {
  override readonly name = 'ScanRootError';
  readonly code: ScanRootErrorCode;

  constructor(code: ScanRootErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}

export interface ScanRoot {
  folder: Folder;
  /** Ignore files above the scan root that could not be applied. */
  problems: SkippedPath[];
}

function subdirSegments(subdir: string | null): string[] {
  if (subdir === null) return [];
  const segments = subdir.split('/').filter((segment) => segment !== '');
  if (segments.some((segment) => segment === '.' || segment === '..' || segment.includes('\0'))) {
    throw new ScanRootError('SUBDIR_INVALID', 'subdir must be a plain relative folder path');
  }
  return segments;
}

async function isRealFolder(ctx: WalkContext, abs: string): Promise<boolean> {
  try {
    return (await ctx.fs.lstat(abs)).isDirectory();
  } catch {
    return false;
  }
}

async function applicableIgnoreFiles(ctx: WalkContext, folderAbs: string): Promise<string[]> {
  const present: string[] = [];
  for (const name of IGNORE_FILE_NAMES) {
    // A linked ignore file is not read, as git does not read one either.
    const stats = await ctx.fs.lstat(join(folderAbs, name)).catch(() => null);
    if (stats?.isFile()) present.push(name);
  }
  return present;
}

export async function openScanRoot(ctx: WalkContext, root: string, subdir: string | null): Promise<ScanRoot> {
  const segments = subdirSegments(subdir);
  if (!(await isRealFolder(ctx, root))) {
    throw new ScanRootError('ROOT_NOT_A_DIRECTORY', 'the repository root is not a directory');
  }
  let rel = '';
  let abs = root;
  let ignores = EMPTY_IGNORE_STACK;
  const problems: SkippedPath[] = [];
  for (const segment of segments) {
    if (ctx.syncIgnore) {
      const present = await applicableIgnoreFiles(ctx, abs);
      const loaded = await loadFolderRules(ctx, abs, rel, present, ignores.ruleCount);
      ignores = withFolderRules(ignores, loaded.rules, loaded.ruleCount);
      for (const problem of loaded.problems) problems.push(problem);
    }
    rel = joinRel(rel, segment);
    abs = join(abs, segment);
    if (!(await isRealFolder(ctx, abs))) {
      throw new ScanRootError('SUBDIR_NOT_FOUND', `subdir ${JSON.stringify(rel)} is not a folder of the repository`);
    }
    ignores = enterFolder(ignores, segment);
  }
  return { folder: { rel, abs, depth: 0, ignores }, problems };
}
