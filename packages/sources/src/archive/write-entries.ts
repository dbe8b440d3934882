import { constants } from 'node:fs';
import { mkdir, open } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { crc32 } from 'node:zlib';
import { isWithin } from '../local/is-within.js';
import { fdPath, isAt, PROVES_PATHS } from '@reposcan/core/proven-path';
import { archiveTooLarge, formatBytes, quoteName, unsafeArchive } from './archive-errors.js';
import type { PlannedEntry } from './inspect-central-directory.js';
import { type ZipReader, translateZipError } from './yauzl-reader.js';

// Archive permissions are ignored: a 0o300 or 0o000 entry must not make an unreadable or
// undeletable tree, and nothing extracted is executable or set-id.
const DIRECTORY_MODE = 0o755;
const FILE_MODE = 0o644;
// O_EXCL: never reuse or write through an existing path; O_NOFOLLOW: never through a link.
const CREATE_FILE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
const OPEN_FOLDER = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/**
 * The folders entries are written into, each one proven to be at its place below the destination
 * (`@reposcan/core/proven-path`) before anything is made in it: a new folder is made and opened through its
 * parent's handle, one made earlier is reopened by its path and checked, and files are created
 * through their folder's handle. So nothing is made or written elsewhere, whatever a folder on the
 * way turned out to be. Entries of one folder usually come together: the last folder stays open.
 */
class Folders {
  readonly #made = new Set<string>();
  #open: { directory: string; handle: FileHandle } | null = null;

  constructor(readonly destDir: string) {
    this.#made.add(destDir);
  }

  /** Makes `directory` and those above it, proves it, and gives the path its entries are created through. */
  async enter(directory: string, entryName: string): Promise<string> {
    if (!PROVES_PATHS) {
      if (!this.#made.has(directory)) await mkdir(directory, { recursive: true, mode: DIRECTORY_MODE });
      this.#made.add(directory);
      return directory;
    }
    if (this.#open?.directory !== directory) {
      const handle = await this.#openProven(directory, entryName);
      await this.close();
      this.#open = { directory, handle };
    }
    return fdPath(this.#open.handle.fd);
  }

  async #openProven(directory: string, entryName: string): Promise<FileHandle> {
    const misplaced = () =>
      unsafeArchive(`the folder of the entry ${quoteName(entryName)} is not where the archive puts it`);
    if (this.#made.has(directory)) {
      const handle = await open(directory, OPEN_FOLDER).catch(() => null);
      if (handle !== null && (await isAt(handle.fd, directory))) return handle;
      await handle?.close();
      throw misplaced();
    }
    // Every target is below destDir (checked by the caller), which is made: the climb ends there.
    if (path.dirname(directory) === directory) throw misplaced();
    const parent = await this.#openProven(path.dirname(directory), entryName);
    try {
      const inParent = path.join(fdPath(parent.fd), path.basename(directory));
      await mkdir(inParent, { mode: DIRECTORY_MODE });
      const handle = await open(inParent, OPEN_FOLDER);
      this.#made.add(directory);
      return handle;
    } finally {
      await parent.close();
    }
  }

  async close(): Promise<void> {
    const current = this.#open;
    this.#open = null;
    await current?.handle.close();
  }
}

/**
 * Pass 2: writes the planned entries below `destDir` (a real path), streaming. Counts the bytes
 * actually inflated against the archive limit (declared sizes were only a promise) and checks
 * each file's CRC-32 against the central directory, which catches a stored entry whose sizes
 * were shortened: yauzl reads exactly the declared bytes and cannot tell. Returns bytes written.
 */
export async function writeEntries(
  zip: ZipReader,
  entries: readonly PlannedEntry[],
  destDir: string,
  maxBytes: number,
  signal?: AbortSignal,
): Promise<number> {
  const folders = new Folders(destDir);
  let written = 0;
  try {
    for (const { entry, kind, components } of entries) {
      signal?.throwIfAborted();
      const target = path.join(destDir, ...components);
      // Names were validated in pass 1; this lexical check guards the write itself.
      if (!isWithin(destDir, target)) {
        throw unsafeArchive(`the entry ${quoteName(entry.fileName)} points outside the archive`);
      }
      if (kind === 'directory') {
        await folders.enter(target, entry.fileName);
        continue;
      }
      const via = await folders.enter(path.dirname(target), entry.fileName);
      const handle = await open(path.join(via, path.basename(target)), CREATE_FILE, FILE_MODE);
      let checksum = 0;
      const countAndCheck = async function* (chunks: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
        for await (const chunk of chunks) {
          written += chunk.length;
          if (written > maxBytes) {
            throw archiveTooLarge(`it expands to more than ${formatBytes(maxBytes)}`);
          }
          checksum = crc32(chunk, checksum);
          yield chunk;
        }
        if (checksum !== entry.crc32) {
          throw unsafeArchive(
            `the data of ${quoteName(entry.fileName)} does not match its checksum (damaged, or sizes were altered)`,
          );
        }
      };
      try {
        const source = await zip.openEntry(entry);
        await pipeline(source, countAndCheck, handle.createWriteStream(), { signal });
      } catch (error) {
        // Inflate errors and yauzl's size assertion arrive here, from inside the stream.
        throw translateZipError(error, 'data');
      } finally {
        await handle.close();
      }
    }
  } finally {
    await folders.close();
  }
  return written;
}
