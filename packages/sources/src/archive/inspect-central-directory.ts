import { ScanError } from '@reposcan/contracts';
import { archiveTooLarge, formatBytes, notAZip, quoteName, unsafeArchive } from './archive-errors.js';
import { EntryCollisions } from './entry-collisions.js';
import { type EntryKind, entryKind } from './entry-kind.js';
import { entryPathComponents, isMacMetadata } from './entry-names.js';
import { assertNoOverlappingEntries } from './entry-ranges.js';
import type { ZipEntry, ZipReader } from './yauzl-reader.js';
import type { ZipLimits } from './zip-limits.js';

/** One entry that passed every check and will be written. */
export interface PlannedEntry {
  entry: ZipEntry;
  kind: EntryKind;
  /** Normalised path components below the extraction folder; never empty. */
  components: string[];
}

const STORED = 0;
const DEFLATED = 8;

/**
 * Pass 1: reads the central directory (and the local headers, 30 bytes each) and refuses the
 * archive before anything is inflated or written. Every entry is checked, metadata entries
 * that will be dropped included, so one bad entry refuses the whole archive. Returns the
 * entries to write, in central-directory order (macOS metadata and `./` left out).
 */
export async function inspectCentralDirectory(
  zip: ZipReader,
  limits: ZipLimits,
  signal?: AbortSignal,
): Promise<PlannedEntry[]> {
  if (zip.entryCount > limits.maxEntries) {
    throw new ScanError(
      'TOO_MANY_ENTRIES',
      `The archive has ${zip.entryCount} entries, more than the limit of ${limits.maxEntries}; leave out generated files and dependencies and upload it again.`,
    );
  }
  const all: ZipEntry[] = [];
  const planned: PlannedEntry[] = [];
  const collisions = new EntryCollisions();
  let declaredBytes = 0;

  for (let entry = await zip.nextEntry(); entry !== null; entry = await zip.nextEntry()) {
    signal?.throwIfAborted();
    all.push(entry);
    const quoted = quoteName(entry.fileName);
    if (entry.isEncrypted()) throw unsafeArchive(`the entry ${quoted} is encrypted`);
    // Not unsafe, just unreadable here (bzip2, LZMA, zstd…): refused up front as 415, rather
    // than failing half-way through extraction.
    if (entry.compressionMethod !== STORED && entry.compressionMethod !== DEFLATED) {
      throw notAZip(
        `the entry ${quoted} uses compression method ${entry.compressionMethod}, which is not supported; re-create the ZIP with standard (deflate) compression`,
      );
    }
    const kind = entryKind(entry);
    const components = entryPathComponents(entry.fileName, entry.fileNameRaw, limits);
    if (kind === 'directory' && entry.uncompressedSize > 0) {
      throw unsafeArchive(`the folder entry ${quoted} carries data`);
    }
    if (kind === 'file' && components.length === 0) {
      throw unsafeArchive('a file entry has an empty name');
    }
    declaredBytes += entry.uncompressedSize;
    if (declaredBytes > limits.maxUncompressedBytes) {
      throw archiveTooLarge(`its files add up to more than ${formatBytes(limits.maxUncompressedBytes)} uncompressed`);
    }
    if (components.length === 0 || isMacMetadata(components)) continue;
    collisions.add(components, kind);
    planned.push({ entry, kind, components });
  }

  // A size limit (413), not UNSAFE_ARCHIVE: an honest archive of very repetitive data can
  // trip it too, and the remedy is the same as for a big archive.
  if (declaredBytes > limits.maxRatio * zip.fileSize) {
    throw archiveTooLarge(`it expands more than ${limits.maxRatio} times its own size, which is how zip bombs look`);
  }
  await assertNoOverlappingEntries(zip, all, signal);
  return planned;
}
