import { isUtf8 } from 'node:buffer';
import type { Readable } from 'node:stream';
import yauzl from 'yauzl';
import { isScanError } from '@reposcan/contracts';
import { notAZip, unsafeArchive } from './archive-errors.js';

export type ZipEntry = yauzl.Entry;

/** The few yauzl operations extraction needs, with yauzl's errors turned into ScanErrors. */
export interface ZipReader {
  /** Size of the archive file in bytes. */
  readonly fileSize: number;
  /** Entry count from the end-of-central-directory record, known before any entry is read. */
  readonly entryCount: number;
  /** The next central-directory record, or null at the end. Reads metadata only. */
  nextEntry(): Promise<ZipEntry | null>;
  /** Offset of the entry's first data byte, from its local header (yauzl bounds it by the file size). */
  dataStart(entry: ZipEntry): Promise<number>;
  /** The entry's decoded bytes; yauzl errors if a deflated stream exceeds its declared size. */
  openEntry(entry: ZipEntry): Promise<Readable>;
  close(): void;
}

export async function openZipReader(zipPath: string): Promise<ZipReader> {
  const zipfile = await new Promise<yauzl.ZipFile>((resolve, reject) => {
    yauzl.open(
      zipPath,
      {
        lazyEntries: true,
        autoClose: false,
        decodeStrings: true,
        validateEntrySizes: true,
        strictFileNames: true,
      },
      (error, opened) => (error ? reject(translateZipError(error, 'directory')) : resolve(opened)),
    );
  });
  // yauzl also emits errors outside a pending read (closing the fd); without a listener they
  // would crash the process. Reads below get their errors through their own listeners.
  zipfile.on('error', () => undefined);

  return {
    fileSize: zipfile.fileSize,
    entryCount: zipfile.entryCount,
    nextEntry: () =>
      new Promise<ZipEntry | null>((resolve, reject) => {
        const settle = (): void => {
          zipfile.off('entry', onEntry).off('end', onEnd).off('error', onError);
        };
        const onEntry = (entry: ZipEntry): void => {
          settle();
          resolve(withUtf8Name(entry));
        };
        const onEnd = (): void => {
          settle();
          resolve(null);
        };
        const onError = (error: Error): void => {
          settle();
          reject(translateZipError(error, 'directory'));
        };
        zipfile.on('entry', onEntry).on('end', onEnd).on('error', onError);
        zipfile.readEntry();
      }),
    dataStart: async (entry) => {
      try {
        return (await zipfile.readLocalFileHeaderPromise(entry, { minimal: true })).fileDataStart;
      } catch (error) {
        throw translateZipError(error, 'data');
      }
    },
    openEntry: async (entry) => {
      try {
        return await zipfile.openReadStreamPromise(entry);
      } catch (error) {
        throw translateZipError(error, 'data');
      }
    },
    close: () => zipfile.close(),
  };
}

/** General purpose flag bit 11: the entry's name and comment are UTF-8. */
const UTF8_FLAG = 0x800;
/** Info-ZIP's Unicode Path extra field, which yauzl reads the name from when it is present. */
const UNICODE_PATH_FIELD = 0x7075;

/**
 * Without the UTF-8 flag a name is CP437 by the ZIP specification, and yauzl decodes it so; but
 * Info-ZIP's `zip`, the everyday tool on Linux, writes the UTF-8 bytes of the file names with
 * neither the flag nor a Unicode Path field. A name whose bytes are UTF-8 (and not plain ASCII,
 * which reads alike either way) is read as UTF-8, as `unzip` does; any other keeps CP437.
 */
function withUtf8Name(entry: ZipEntry): ZipEntry {
  const raw = entry.fileNameRaw;
  if (
    (entry.generalPurposeBitFlag & UTF8_FLAG) !== 0 ||
    entry.extraFields.some((field) => field.id === UNICODE_PATH_FIELD) ||
    raw.every((byte) => byte < 0x80) ||
    !isUtf8(raw)
  )
    return entry;
  entry.fileName = raw.toString('utf8');
  return entry;
}

/**
 * yauzl reports everything as plain `Error`s with descriptive messages; sort them into the
 * shared codes. System errors (`code` set, e.g. EIO) and bugs (TypeError…) pass through.
 * `stage`: reading the directory (end record, central records) or an entry's header and data.
 */
export function translateZipError(error: unknown, stage: 'directory' | 'data'): Error {
  if (!(error instanceof Error)) return new Error(`ZIP reader failed: ${String(error)}`);
  if (isScanError(error)) return error;
  const code = (error as NodeJS.ErrnoException).code;
  if (typeof code === 'string' && code.startsWith('Z_')) {
    return unsafeArchive('the compressed data of an entry is damaged or does not match its declared size', error);
  }
  if (code !== undefined || error.constructor !== Error) return error;

  const message = error.message;
  if (/^(invalid characters in fileName|absolute path|invalid relative path)/.test(message)) {
    return unsafeArchive(
      'an entry name is absolute, climbs out with "..", or contains a backslash or a drive letter',
      error,
    );
  }
  if (message.includes('strong encryption')) {
    return unsafeArchive('it contains encrypted entries', error);
  }
  if (/size mismatch|too many bytes|not enough bytes|overflows file bounds/.test(message)) {
    return unsafeArchive('an entry declares sizes that do not match its data', error);
  }
  if (message.includes('multi-disk')) {
    return notAZip('split (multi-part) ZIP archives are not supported; upload a single-file .zip', error);
  }
  if (stage === 'data') {
    return unsafeArchive('the data of an entry is not where the archive says it is', error);
  }
  return notAZip('the file is not a ZIP archive, or it is damaged; upload a .zip made by a standard ZIP tool', error);
}
