// Node-only helpers (files on disk); the main entry stays free of node: imports so a browser
// build can use it.
import { createHash } from 'node:crypto';
import { createWriteStream, openAsBlob } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { basename } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Artifact, ArtifactFormat, UploadOptions } from './api-types.js';
import type { ReposcanClient, RequestOptions, SubmitOptions, Submission } from './client.js';
import { ReposcanIntegrityError } from './errors.js';

/** Upload a .zip from disk; the file is streamed, not read into memory first. */
export async function uploadFile(
  client: ReposcanClient,
  path: string,
  options: UploadOptions = {},
  submit: SubmitOptions = {},
): Promise<Submission> {
  const blob = await openAsBlob(path, { type: 'application/zip' });
  return client.upload(blob, basename(path), options, submit);
}

export interface SavedArtifact {
  format: ArtifactFormat;
  path: string;
  bytes: number;
  sha256: string;
}

export interface DownloadToFileOptions extends RequestOptions {
  /** The artifact as the scan result lists it: the download must match its size and SHA-256. */
  expected?: Pick<Artifact, 'bytes' | 'sha256'>;
  /** Which part of an output in parts (from 1). */
  part?: number;
  /** Called with the bytes written so far. */
  onBytes?: (written: number) => void;
}

/**
 * Download an artifact to `path`. Bytes go to `path.part` and are renamed into place only
 * when complete (and matching `expected`), so `path` never holds a partial file.
 */
export async function downloadToFile(
  client: ReposcanClient,
  scanId: string,
  format: ArtifactFormat,
  path: string,
  options: DownloadToFileOptions = {},
): Promise<SavedArtifact> {
  const download = await client.download(scanId, format, options);
  const partial = `${path}.part`;
  const hash = createHash('sha256');
  let bytes = 0;
  const count = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      hash.update(chunk);
      bytes += chunk.length;
      options.onBytes?.(bytes);
      callback(null, chunk);
    },
  });
  try {
    await pipeline(Readable.fromWeb(download.body), count, createWriteStream(partial), { signal: options.signal });
    const sha256 = hash.digest('hex');
    const { expected } = options;
    if (expected && (expected.bytes !== bytes || expected.sha256 !== sha256)) {
      throw new ReposcanIntegrityError(
        `${format} artifact of scan ${scanId} does not match the scan result: got ${bytes} bytes (sha256 ${sha256}), expected ${expected.bytes} bytes (sha256 ${expected.sha256}).`,
      );
    }
    await rename(partial, path);
    return { format, path, bytes, sha256 };
  } catch (error) {
    await rm(partial, { force: true });
    throw error;
  }
}
