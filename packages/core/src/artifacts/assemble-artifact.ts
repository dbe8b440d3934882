import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import { closeSync, fdatasyncSync, openSync, readSync, rmSync, writeSync } from 'node:fs';

/** One artifact to put together: its head, the body streamed during the scan, its tail. */
export interface AssembleRequest {
  /** Created exclusively: an artifact never overwrites a file. */
  outPath: string;
  head: string;
  bodyPath: string;
  tail: string;
}

export interface AssembledArtifact {
  bytes: number;
  sha256: string;
}

const COPY_CHUNK = 1 << 20;
/** One copy buffer per thread, reused: a new one per artifact is memory the GC frees late. */
let copyBuffer: Buffer | null = null;

function writeAllSync(fd: number, data: Uint8Array): void {
  for (let offset = 0; offset < data.byteLength; ) offset += writeSync(fd, data, offset, data.byteLength - offset);
}

/**
 * Writes head + body + tail to `outPath`, hashing as it goes, and syncs it to disk. Blocking
 * calls, for an io thread (io-threads.ts runs a scan's three on its file threads side by side):
 * async 1 MiB round trips on the event loop cost several times more.
 * A failed assembly removes what it wrote: no partial artifact is left behind.
 */
export function assembleArtifactSync(request: AssembleRequest): AssembledArtifact {
  const hash = createHash('sha256');
  let bytes = 0;
  const out = openSync(request.outPath, 'wx');
  let complete = false;
  try {
    const put = (data: Uint8Array): void => {
      hash.update(data);
      bytes += data.byteLength;
      writeAllSync(out, data);
    };
    put(Buffer.from(request.head, 'utf8'));
    const body = openSync(request.bodyPath, 'r');
    try {
      copyBuffer ??= Buffer.allocUnsafeSlow(COPY_CHUNK);
      const chunk = copyBuffer;
      for (let position = 0; ; ) {
        const read = readSync(body, chunk, 0, COPY_CHUNK, position);
        if (read === 0) break;
        position += read;
        put(chunk.subarray(0, read));
      }
    } finally {
      closeSync(body);
    }
    put(Buffer.from(request.tail, 'utf8'));
    fdatasyncSync(out);
    complete = true;
  } finally {
    closeSync(out);
    if (!complete) rmSync(request.outPath, { force: true });
  }
  return { bytes, sha256: hash.digest('hex') };
}
