import { inspectCentralDirectory } from './inspect-central-directory.js';
import { openZipReader } from './yauzl-reader.js';
import type { ZipLimits } from './zip-limits.js';

/**
 * Pass 1 of extraction on its own: refuses an archive the extractor would refuse before
 * inflating anything (NOT_A_ZIP, TOO_MANY_ENTRIES, ARCHIVE_TOO_LARGE, UNSAFE_ARCHIVE), reading
 * only the central directory and the local headers. The API runs it on an upload before
 * queueing, so a bad archive gets its 4xx at once and never reaches a worker; the worker's
 * extraction checks again, and also catches what only the data shows (a lying size).
 */
export async function checkZip(zipPath: string, limits: ZipLimits, signal?: AbortSignal): Promise<{ entries: number }> {
  const zip = await openZipReader(zipPath);
  try {
    return { entries: (await inspectCentralDirectory(zip, limits, signal)).length };
  } finally {
    zip.close();
  }
}
