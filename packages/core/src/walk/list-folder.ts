// Lists one folder: its ignore files, which entries are kept, and the size of each kept file.
import { join } from 'node:path';
import type { SkippedPath, SkipReason, WalkedFile } from '../types.js';
import { fileSkipReason, folderSkipReason } from './classify-entry.js';
import { VIRTUALENV_MARKER } from './default-excludes.js';
import { IGNORE_FILE_NAMES } from './ignore-file-names.js';
import { loadFolderRules } from './ignore-files.js';
import { enterFolder, withFolderRules } from './ignore-stack.js';
import { sortByName } from './name-order.js';
import type { AbsentEntries, Folder, WalkContext } from './walk-context.js';
import { joinRel } from './walk-context.js';
import type { WalkDirent, WalkFolder } from './walk-deps.js';

export interface ListedFolder {
  kind: 'listed';
  /** Sub-folders to descend into, in output order. */
  subfolders: Folder[];
  /** Kept files, in output order. */
  files: WalkedFile[];
  /** Entries of this folder skipped for their own reasons. */
  skipped: SkippedPath[];
}

/** The folder itself is skipped (recorded once, with a trailing `/`). */
export interface SkippedFolder {
  kind: 'skipped';
  reason: SkipReason;
}

export type FolderListing = ListedFolder | SkippedFolder;

interface Candidate {
  name: string;
  rel: string;
  abs: string;
}

/** Why a folder could not be opened as the folder the listing of its parent saw. */
function openFailure(error: unknown): SkipReason {
  // ENOTDIR and EMOVED (it changed, or a folder on the way did, since its parent was listed) are
  // `unreadable`: telling a link from a file would take another look up a path that is no longer proven.
  return (error as { code?: unknown }).code === 'ELOOP' ? 'symlink' : 'unreadable';
}

async function readEntries(ctx: WalkContext, handle: WalkFolder): Promise<readonly WalkDirent[] | SkipReason> {
  try {
    return await ctx.pool.run(() => ctx.fs.readdir(handle));
  } catch {
    return 'unreadable';
  }
}

async function measureFile(ctx: WalkContext, handle: WalkFolder, file: Candidate): Promise<WalkedFile | SkippedPath> {
  if (ctx.stopped) return { path: file.rel, reason: 'limit' };
  try {
    // Sizes come from lstat, and the type is checked again in case the entry changed since.
    const stats = await ctx.fs.lstat(handle, file.name);
    if (stats.isSymbolicLink()) return { path: file.rel, reason: 'symlink' };
    if (!stats.isFile()) return { path: file.rel, reason: 'unreadable' };
    if (stats.size > ctx.maxFileBytes) return { path: file.rel, reason: 'too_large' };
    return { path: file.rel, absPath: file.abs, size: stats.size };
  } catch {
    return { path: file.rel, reason: 'unreadable' };
  }
}

export async function listFolder(ctx: WalkContext, folder: Folder): Promise<FolderListing> {
  if (ctx.stopped) return { kind: 'skipped', reason: 'limit' };
  const absent = ctx.absent?.get(folder.rel);
  let handle: WalkFolder | null;
  try {
    handle = await ctx.pool.run(() => ctx.fs.openFolder(folder.abs));
  } catch (error) {
    // A folder of absent files only: nothing of it is on disk.
    if (absent === undefined || (error as { code?: unknown }).code !== 'ENOENT')
      return { kind: 'skipped', reason: openFailure(error) };
    handle = null;
  }
  try {
    return await listOpenFolder(ctx, folder, handle, absent);
  } finally {
    // Every call into the folder has settled by now: its descriptor cannot be reused under one.
    if (handle !== null) await ctx.fs.closeFolder(handle).catch(() => undefined);
  }
}

/** An entry of WalkInput.absent, listed as its folder's own entries are. */
function absentEntry(name: string, folder: boolean): WalkDirent {
  return { name, isFile: () => !folder, isDirectory: () => folder, isSymbolicLink: () => false };
}

async function listOpenFolder(
  ctx: WalkContext,
  folder: Folder,
  handle: WalkFolder | null,
  absent: AbsentEntries | undefined,
): Promise<FolderListing> {
  const onDisk = handle === null ? [] : await readEntries(ctx, handle);
  if (typeof onDisk === 'string') return { kind: 'skipped', reason: onDisk };
  // What is on disk wins: a file also present (its blob arrived after all) is measured there.
  const entries: WalkDirent[] = [...onDisk];
  const seen = new Set(absent === undefined ? [] : onDisk.map((e) => e.name));
  if (absent !== undefined) {
    for (const name of absent.folders) if (!seen.has(name)) entries.push(absentEntry(name, true));
    for (const name of absent.files.keys()) if (!seen.has(name)) entries.push(absentEntry(name, false));
  }
  if (folder.depth > 0 && entries.some((e) => e.name === VIRTUALENV_MARKER && !e.isDirectory())) {
    return { kind: 'skipped', reason: 'excluded_dir' };
  }

  const skipped: SkippedPath[] = [];
  let ignores = folder.ignores;
  const handled = new Set<string>();
  if (ctx.syncIgnore && handle !== null) {
    const present = onDisk.filter((e) => e.isFile() && IGNORE_FILE_NAMES.includes(e.name)).map((e) => e.name);
    if (present.length > 0) {
      const loaded = await loadFolderRules(ctx, handle, folder.rel, present);
      ignores = withFolderRules(ignores, loaded.rules, loaded.ownRules);
      for (const problem of loaded.problems) {
        skipped.push(problem);
        handled.add(problem.path);
      }
    }
  }

  const subfolders: Folder[] = [];
  const candidates: Candidate[] = [];
  const depth = folder.depth + 1;
  for (const entry of sortByName(entries, (e) => e.name)) {
    const rel = joinRel(folder.rel, entry.name);
    if (handled.has(rel)) continue;
    const abs = join(folder.abs, entry.name);
    if (entry.isDirectory()) {
      const verdict = folderSkipReason(ctx, ignores, entry.name, rel, depth, folder.gitIgnored);
      if (typeof verdict === 'string') skipped.push({ path: `${rel}/`, reason: verdict });
      else subfolders.push({ rel, abs, depth, ignores: enterFolder(ignores, entry.name), ...verdict });
    } else {
      const reason = fileSkipReason(ctx, ignores, entry, rel, folder.gitIgnored);
      if (reason === null) candidates.push({ name: entry.name, rel, abs });
      else skipped.push({ path: rel, reason });
    }
  }

  const measured = await Promise.all(
    candidates.map((c) => {
      const size = seen.has(c.name) ? undefined : absent?.files.get(c.name);
      if (size === undefined) return ctx.pool.run(() => measureFile(ctx, handle as WalkFolder, c));
      return Promise.resolve<WalkedFile | SkippedPath>(
        size > ctx.maxFileBytes ? { path: c.rel, reason: 'too_large' } : { path: c.rel, absPath: c.abs, size },
      );
    }),
  );
  const files: WalkedFile[] = [];
  for (const result of measured) {
    if ('reason' in result) skipped.push(result);
    else files.push(result);
  }
  return { kind: 'listed', subfolders, files, skipped };
}
