import { quoteName, unsafeArchive } from './archive-errors.js';
import type { ZipEntry } from './yauzl-reader.js';

export type EntryKind = 'file' | 'directory';

const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;
const S_IFLNK = 0o120000;

/**
 * Regular file or folder, from the Unix mode in the high 16 bits of the external attributes
 * (0 when a DOS/Windows tool made the entry; the trailing `/` then marks a folder). Links and
 * every special type (FIFO, device, socket) refuse the whole archive (docs/api.md, ZIP uploads).
 */
export function entryKind(entry: Pick<ZipEntry, 'externalFileAttributes' | 'fileName'>): EntryKind {
  const type = (entry.externalFileAttributes >>> 16) & S_IFMT;
  const slash = entry.fileName.endsWith('/');
  const quoted = quoteName(entry.fileName);
  if (type === S_IFLNK) throw unsafeArchive(`the entry ${quoted} is a symbolic link`);
  if (type === S_IFDIR || (type === 0 && slash)) return 'directory';
  if (type === S_IFREG || type === 0) {
    if (slash) throw unsafeArchive(`the entry ${quoted} is marked as a file but named like a folder`);
    return 'file';
  }
  throw unsafeArchive(`the entry ${quoted} is a special file (type 0o${type.toString(8)})`);
}
