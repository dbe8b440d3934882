import { constants } from 'node:fs';
import { mkdir, open } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { crc32 } from 'node:zlib';
import { isWithin } from '../local/is-within.js';
import { archiveTooLarge, formatBytes, quoteName, unsafeArchive } from './archive-errors.js';
import type { PlannedEntry } from './inspect-central-directory.js';
import { type ZipReader, translateZipError } from './yauzl-reader.js';

// Archive permissions are ignored: a 0o300 or 0o000 entry must not make an unreadable or
// undeletable tree, and nothing extracted is executable or set-id.
const DIRECTORY_MODE = 0o755;
const FILE_MODE = 0o644;
// O_EXCL: never reuse or write through an existing path; O_NOFOLLOW: never through a link.
const CREATE_FILE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/**
 * Pass 2: writes the planned entries below `destDir`, streaming. Counts the bytes actually
 * inflated against the archive limit (declared sizes were only a promise) and checks each
 * file's CRC-32 against the central directory, which catches a stored entry whose sizes were
 * shortened: yauzl reads exactly the declared bytes and cannot tell. Returns bytes written.
 */
export async function writeEntries(
  zip: ZipReader,
  entries: readonly PlannedEntry[],
  destDir: string,
  maxBytes: number,
  signal?: AbortSignal,
): Promise<number> {
  const made = new Set<string>();
  const ensureDirectory = async (directory: string): Promise<void> => {
    if (made.has(directory)) return;
    await mkdir(directory, { recursive: true, mode: DIRECTORY_MODE });
    made.add(directory);
  };
  let written = 0;

  for (const { entry, kind, components } of entries) {
    signal?.throwIfAborted();
    const target = path.join(destDir, ...components);
    // Names were validated in pass 1; this lexical check guards the write itself.
    if (!isWithin(destDir, target)) {
      throw unsafeArchive(`the entry ${quoteName(entry.fileName)} points outside the archive`);
    }
    if (kind === 'directory') {
      await ensureDirectory(target);
      continue;
    }
    await ensureDirectory(path.dirname(target));

    const handle = await open(target, CREATE_FILE, FILE_MODE);
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
  return written;
}
