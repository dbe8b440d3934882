import { constants } from 'node:fs';
import { open } from 'node:fs/promises';

export type ReadOutcome =
  /** `bytes` live in shared memory (`into`, or a new SharedArrayBuffer): token threads read them without a copy. */
  | { ok: true; bytes: Uint8Array }
  | { ok: false; reason: 'too_large' | 'symlink' | 'unreadable' };

const FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/**
 * Read one file once, into `into` when it has room, safely: no symlink is followed
 * (O_NOFOLLOW), FIFOs and devices never block (O_NONBLOCK + a regular-file check on the open
 * handle), and at most `maxBytes` are read whatever the size on disk says (files can grow after
 * the walk; /proc reports 0).
 */
export async function readFileBytes(absPath: string, maxBytes: number, into?: Uint8Array): Promise<ReadOutcome> {
  let handle;
  try {
    handle = await open(absPath, FLAGS);
  } catch (error) {
    return { ok: false, reason: (error as NodeJS.ErrnoException).code === 'ELOOP' ? 'symlink' : 'unreadable' };
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) return { ok: false, reason: 'unreadable' };
    if (stat.size > maxBytes) return { ok: false, reason: 'too_large' };
    // One byte of headroom tells a file that grew past the cap from one that fits exactly.
    const room = Math.min(stat.size, maxBytes) + 1;
    // `into` was sized from the walk; a file that has grown since then gets memory of its own.
    const buffer = into !== undefined && into.length >= room ? into.subarray(0, room) : new Uint8Array(new SharedArrayBuffer(room));
    let filled = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
      if (filled === buffer.length) {
        if (filled > maxBytes) return { ok: false, reason: 'too_large' };
        break;
      }
    }
    return { ok: true, bytes: buffer.subarray(0, filled) };
  } catch {
    return { ok: false, reason: 'unreadable' };
  } finally {
    await handle.close();
  }
}
