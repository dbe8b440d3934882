// The folder the walk starts from: the repository root, or a subdir of it reached without
// following links, carrying the ignore rules of the root and of every folder on the way.
import { join, resolve } from 'node:path';
import type { SkippedPath } from '../types.js';
import { IGNORE_FILE_NAMES } from './ignore-file-names.js';
import { loadFolderRules } from './ignore-files.js';
import { indexIgnoreRules, rulesOfFile } from './ignore-rules.js';
import { EMPTY_IGNORE_STACK, enterFolder, isIgnored, withBottomRules, withFolderRules } from './ignore-stack.js';
import type { Folder, WalkContext } from './walk-context.js';
import { joinRel } from './walk-context.js';
import type { WalkFolder } from './walk-deps.js';

export type ScanRootErrorCode =
  'ROOT_NOT_A_DIRECTORY' | 'ROOT_MOVED' | 'ROOT_UNREADABLE' | 'SUBDIR_INVALID' | 'SUBDIR_NOT_FOUND';

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

async function applicableIgnoreFiles(ctx: WalkContext, folder: WalkFolder): Promise<string[]> {
  const present: string[] = [];
  for (const name of IGNORE_FILE_NAMES) {
    // A linked ignore file is not read, as git does not read one either.
    const stats = await ctx.fs.lstat(folder, name).catch(() => null);
    if (stats?.isFile()) present.push(name);
  }
  return present;
}

async function openRoot(ctx: WalkContext, root: string): Promise<WalkFolder> {
  try {
    return await ctx.fs.openFolder(root);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'EMOVED') {
      throw new ScanRootError(
        'ROOT_MOVED',
        'the repository root is not at its real path: a folder on the way is a link, or it moved',
      );
    }
    if (code === 'ENOTDIR' || code === 'ENOENT' || code === 'ELOOP') {
      throw new ScanRootError('ROOT_NOT_A_DIRECTORY', 'the repository root is not a directory');
    }
    throw new ScanRootError('ROOT_UNREADABLE', 'the scan root cannot be listed');
  }
}

/**
 * Opens the root (which must be given by its real path: every folder and file of the walk is
 * proven to lie at the root's real path joined with its relative path) and goes down to the
 * subdir one proven folder at a time, reading the ignore files on the way. `infoExclude` (the
 * bytes of a work tree's `.git/info/exclude`) is the weakest layer of rules, for the whole tree.
 */
export async function openScanRoot(
  ctx: WalkContext,
  root: string,
  subdir: string | null,
  infoExclude: Uint8Array | null = null,
): Promise<ScanRoot> {
  const segments = subdirSegments(subdir);
  let abs = resolve(root);
  let folder = await openRoot(ctx, abs);
  let rel = '';
  let ignores = EMPTY_IGNORE_STACK;
  if (ctx.syncIgnore && infoExclude !== null) {
    const rules = rulesOfFile(infoExclude);
    if (rules.length > 0) ignores = withBottomRules(ignores, indexIgnoreRules(rules));
  }
  // A subdir git ignores is scanned for the tracked files it holds, as git lists them.
  let gitIgnored = false;
  const problems: SkippedPath[] = [];
  try {
    for (const segment of segments) {
      if (ctx.syncIgnore) {
        const present = await applicableIgnoreFiles(ctx, folder);
        const loaded = await loadFolderRules(ctx, folder, rel, present);
        ignores = withFolderRules(ignores, loaded.rules, loaded.ownRules);
        for (const problem of loaded.problems) problems.push(problem);
      }
      if (ctx.tracked !== null && isIgnored(ignores, segment, true)) gitIgnored = true;
      rel = joinRel(rel, segment);
      abs = join(abs, segment);
      const next = await ctx.fs.openFolder(abs).catch(() => null);
      if (next === null) {
        throw new ScanRootError('SUBDIR_NOT_FOUND', `subdir ${JSON.stringify(rel)} is not a folder of the repository`);
      }
      const above = folder;
      folder = next;
      await ctx.fs.closeFolder(above).catch(() => undefined);
      ignores = enterFolder(ignores, segment);
    }
  } finally {
    await ctx.fs.closeFolder(folder).catch(() => undefined);
  }
  // The folder is opened and proven again when it is listed.
  return { folder: { rel, abs, depth: 0, ignores, gitIgnored }, problems };
}
