import { ScanError } from '@reposcan/contracts';

// What JSON.stringify leaves raw but a terminal or log viewer would act on: DEL, C1 controls,
// line/paragraph separators, bidi overrides and isolates.
const INVISIBLE_CONTROL = /[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** An entry name made safe to quote in a message or a log: escaped, and short. */
export function quoteName(name: string): string {
  return JSON.stringify(name.length > 120 ? `${name.slice(0, 120)}…` : name).replace(
    INVISIBLE_CONTROL,
    (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** 422: the archive contains something we never extract; the whole upload is refused. */
export function unsafeArchive(reason: string, cause?: unknown): ScanError {
  return new ScanError(
    'UNSAFE_ARCHIVE',
    `The archive was refused because ${reason}; nothing was extracted. Re-create the ZIP with a standard tool, with only regular files and folders and no password, and upload it again.`,
    { cause },
  );
}

/** 415: not something we can read as a ZIP. */
export function notAZip(reason: string, cause?: unknown): ScanError {
  return new ScanError('NOT_A_ZIP', `The upload was not accepted: ${reason}.`, { cause });
}

/** 413: over a size limit. */
export function archiveTooLarge(reason: string): ScanError {
  return new ScanError(
    'ARCHIVE_TOO_LARGE',
    `The archive is too large: ${reason}. Leave out large or generated files (build output, dependencies, data) and upload a smaller archive.`,
  );
}

export function formatBytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / (1024 * 1024)).toFixed(1)} MiB` : `${bytes} bytes`;
}
