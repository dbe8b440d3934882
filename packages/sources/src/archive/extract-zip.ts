import { readdir, realpath } from 'node:fs/promises';
import path from 'node:path';
import { emptyDirectory } from './empty-directory.js';
import { inspectCentralDirectory } from './inspect-central-directory.js';
import { singleTopLevelFolder } from './top-level-folder.js';
import { writeEntries } from './write-entries.js';
import { openZipReader } from './yauzl-reader.js';
import type { ZipLimits } from './zip-limits.js';

export interface ExtractZipOptions {
  zipPath: string;
  /** An existing, empty folder (inside the scan's staging folder) that receives the tree. */
  destDir: string;
  limits: ZipLimits;
  signal?: AbortSignal;
}

export interface ExtractZipResult {
  /** The real path of `destDir`, or of the single top-level folder inside it: what the engine walks from. */
  root: string;
  /** That folder's name as archived (no suffix stripped), or null: use the upload's file name. */
  name: string | null;
  /** Archive entries written, files and folder entries (macOS metadata is not written). */
  entries: number;
  /** Bytes actually written. */
  bytes: number;
}

/**
 * Extracts an uploaded ZIP safely, or refuses it with a ScanError (NOT_A_ZIP,
 * TOO_MANY_ENTRIES, ARCHIVE_TOO_LARGE, UNSAFE_ARCHIVE). Pass 1 reads only the central
 * directory and refuses before anything is inflated or written; pass 2 streams the files out.
 * On any failure, abort included, `destDir` is emptied before the error is rethrown; no
 * temporary file is made anywhere else.
 *
 * Bytes in front of the archive are accepted when the archive's offsets account for them
 * (self-extractor style; every check still applies); a prefix glued on afterwards breaks the
 * offsets and is refused as NOT_A_ZIP. Git is never run in the extracted tree.
 */
export async function extractZip(options: ExtractZipOptions): Promise<ExtractZipResult> {
  const { zipPath, destDir, limits, signal } = options;
  // Emptying on failure must never delete something that was there before us.
  if ((await readdir(destDir)).length > 0) {
    throw new Error(`extractZip needs an empty destination folder: ${destDir}`);
  }
  signal?.throwIfAborted();
  // Our own folder, resolved once: every folder written is then proven to be where it belongs below it.
  const realDest = await realpath(destDir);
  const zip = await openZipReader(zipPath);
  try {
    const planned = await inspectCentralDirectory(zip, limits, signal);
    const bytes = await writeEntries(zip, planned, realDest, limits.maxUncompressedBytes, signal);
    const top = singleTopLevelFolder(planned);
    return {
      root: top === null ? realDest : path.join(realDest, top),
      name: top,
      entries: planned.length,
      bytes,
    };
  } catch (error) {
    await emptyDirectory(destDir);
    throw error;
  } finally {
    zip.close();
  }
}
