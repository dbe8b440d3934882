// The real file system behind the walk: with async calls for an event loop that serves something
// else, and with blocking calls for a thread of its own (the io threads, the inspect thread), where
// they are several times faster (no promise or libuv round trip per entry).
//
// A folder is opened by its real path and then proven to be there (proven-path.ts); everything
// in it is reached through the open folder, so a folder on the way swapped for a link to outside
// the tree, before or after the open, is never followed.
import { closeSync, constants, lstatSync, openSync, readdirSync, readSync } from 'node:fs';
import { lstat, open, readdir } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import type { Dirent } from 'node:fs';
import { asPromise } from '../io/as-promise.js';
import { fdPath, isAt, isAtSync, movedError, PROVES_PATHS } from '../io/proven-path.js';
import { decodePathBytes, fsPath } from '../path-bytes.js';
import type { WalkDeps, WalkDirent, WalkFolder, WalkStats } from './walk-deps.js';

// O_NOFOLLOW: a file swapped for a link after the listing is refused, not followed.
// O_NONBLOCK: a file swapped for a FIFO cannot block the open. Both are absent on Windows.
const READ_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);
// O_DIRECTORY: a folder that became a link, a FIFO or a device is refused (ENOTDIR), never opened.
const FOLDER_FLAGS = READ_FLAGS | (constants.O_DIRECTORY ?? 0);
const CHUNK_BYTES = 64 * 1024;

function errorWithCode(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

/** Where folders cannot be proven: the checks of the folder's own path only, as far as lstat can tell. */
function checkFolderStats(stats: WalkStats): void {
  if (stats.isSymbolicLink()) throw errorWithCode('ELOOP', 'the folder is a symbolic link');
  if (!stats.isDirectory()) throw errorWithCode('ENOTDIR', 'not a folder');
}

class AsyncFolder implements WalkFolder {
  readonly via: string;
  constructor(
    readonly abs: string,
    readonly handle: FileHandle,
  ) {
    this.via = fdPath(handle.fd);
  }
}

class SyncFolder implements WalkFolder {
  readonly via: string;
  constructor(
    readonly abs: string,
    readonly fd: number,
  ) {
    this.via = fdPath(fd);
  }
}

/** `name` in the open folder, as the file system takes it. */
function entryPath(folder: WalkFolder, name: string): string | Buffer {
  return fsPath(`${folder.via}/${name}`);
}

/**
 * A name that is not UTF-8 reads as U+FFFD; so does a real U+FFFD, rarely. Only a listing that
 * holds one is read again as bytes, so the names that do not decode are carried losslessly
 * (path-bytes.ts) while every other listing costs what it did.
 */
function needsBytes(entries: readonly Dirent[]): boolean {
  for (const entry of entries) if (entry.name.includes('\uFFFD')) return true;
  return false;
}

function decodedEntries(entries: readonly Dirent<Buffer>[]): WalkDirent[] {
  return entries.map((entry) => ({
    name: decodePathBytes(entry.name),
    isFile: () => entry.isFile(),
    isDirectory: () => entry.isDirectory(),
    isSymbolicLink: () => entry.isSymbolicLink(),
  }));
}

async function readEntries(folder: WalkFolder): Promise<readonly WalkDirent[]> {
  const path = fsPath(folder.via);
  const entries = await readdir(path, { withFileTypes: true });
  if (!needsBytes(entries)) return entries;
  return decodedEntries(await readdir(path, { withFileTypes: true, encoding: 'buffer' }));
}

function readEntriesSync(folder: WalkFolder): readonly WalkDirent[] {
  const path = fsPath(folder.via);
  const entries = readdirSync(path, { withFileTypes: true });
  if (!needsBytes(entries)) return entries;
  return decodedEntries(readdirSync(path, { withFileTypes: true, encoding: 'buffer' }));
}

async function openFolder(abs: string): Promise<WalkFolder> {
  if (!PROVES_PATHS) {
    checkFolderStats(await lstat(fsPath(abs)));
    return { abs, via: abs };
  }
  const handle = await open(fsPath(abs), FOLDER_FLAGS);
  if (!(await isAt(handle.fd, abs))) {
    await handle.close();
    throw movedError();
  }
  return new AsyncFolder(abs, handle);
}

function openFolderSync(abs: string): WalkFolder {
  if (!PROVES_PATHS) {
    checkFolderStats(lstatSync(fsPath(abs)));
    return { abs, via: abs };
  }
  const fd = openSync(fsPath(abs), FOLDER_FLAGS);
  if (!isAtSync(fd, abs)) {
    closeSync(fd);
    throw movedError();
  }
  return new SyncFolder(abs, fd);
}

// Both readers read in chunks up to the cap: the size lstat reports is not trusted to bound the read.

async function readFileCapped(path: string | Buffer, maxBytes: number): Promise<Uint8Array> {
  const handle = await open(path, READ_FLAGS);
  try {
    const chunks: Buffer[] = [];
    let total = 0;
    while (total < maxBytes) {
      const chunk = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, maxBytes - total));
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
      if (bytesRead === 0) break;
      chunks.push(chunk.subarray(0, bytesRead));
      total += bytesRead;
    }
    return Buffer.concat(chunks, total);
  } finally {
    await handle.close();
  }
}

function readFileCappedSync(path: string | Buffer, maxBytes: number): Uint8Array {
  const fd = openSync(path, READ_FLAGS);
  try {
    const chunks: Buffer[] = [];
    let total = 0;
    while (total < maxBytes) {
      const chunk = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, maxBytes - total));
      const bytesRead = readSync(fd, chunk, 0, chunk.length, null);
      if (bytesRead === 0) break;
      chunks.push(chunk.subarray(0, bytesRead));
      total += bytesRead;
    }
    return Buffer.concat(chunks, total);
  } finally {
    closeSync(fd);
  }
}

export const nodeWalkFs: WalkDeps = {
  openFolder,
  closeFolder: async (folder) => {
    if (folder instanceof AsyncFolder) await folder.handle.close();
    else if (folder instanceof SyncFolder) closeSync(folder.fd);
  },
  readdir: readEntries,
  lstat: (folder, name) => lstat(entryPath(folder, name)),
  readFile: (folder, name, maxBytes) => readFileCapped(entryPath(folder, name), maxBytes),
};

/** The same with blocking calls behind the async signatures the walk awaits. Never on an event loop that serves anything. */
export const syncWalkFs: WalkDeps = {
  openFolder: (abs) => asPromise(() => openFolderSync(abs)),
  closeFolder: nodeWalkFs.closeFolder,
  readdir: (folder) => asPromise(() => readEntriesSync(folder)),
  lstat: (folder, name) => asPromise(() => lstatSync(entryPath(folder, name))),
  readFile: (folder, name, maxBytes) => asPromise(() => readFileCappedSync(entryPath(folder, name), maxBytes)),
  blocking: true,
};
