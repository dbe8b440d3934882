import { unsafeArchive } from './archive-errors.js';
import type { ZipEntry, ZipReader } from './yauzl-reader.js';

/**
 * Refuses archives whose entries share bytes. Fifield's non-recursive zip bomb points many
 * central-directory records into one deflate stream, so a few kB expand to gigabytes while
 * every declared size looks honest; sorted by local-header offset, each entry's header and
 * data must end before the next header begins. Reads only the 30-byte local headers.
 */
export async function assertNoOverlappingEntries(
  zip: ZipReader,
  entries: readonly ZipEntry[],
  signal?: AbortSignal,
): Promise<void> {
  const sorted = [...entries].sort((a, b) => a.relativeOffsetOfLocalHeader - b.relativeOffsetOfLocalHeader);
  let previousEnd = 0;
  for (const entry of sorted) {
    signal?.throwIfAborted();
    if (entry.relativeOffsetOfLocalHeader < previousEnd) {
      throw unsafeArchive('its entries overlap each other (a zip-bomb construction)');
    }
    previousEnd = (await zip.dataStart(entry)) + entry.compressedSize;
  }
}
