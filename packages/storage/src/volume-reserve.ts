import { open, rm, stat } from 'node:fs/promises';
import { hasCode } from './has-code.js';

/** Enough for hundreds of state rewrites: each replaces a file of a few kB and frees the old one. */
export const RESERVE_BYTES = 256 * 1024;

/**
 * Space set aside on the volume so that a scan's outcome can still be recorded once the volume
 * is full: a state write that meets ENOSPC frees the reserve and tries once more, and a scan
 * then reads `failed` / `DISK_FULL` rather than staying `queued` or `running` for ever. The
 * reserve is made again (`replenish`) when there is room: at start and on every janitor sweep.
 */
export class VolumeReserve {
  constructor(
    private readonly path: string,
    private readonly bytes = RESERVE_BYTES,
  ) {}

  /** Makes the reserve when it is missing and the volume has room; otherwise leaves things as they are. */
  async replenish(): Promise<boolean> {
    if ((await stat(this.path).catch(() => null))?.size === this.bytes) return false;
    try {
      const handle = await open(this.path, 'w');
      try {
        // Written, not truncated to size: a sparse file would hold no space at all.
        await handle.writeFile(Buffer.alloc(this.bytes));
        await handle.sync();
      } finally {
        await handle.close();
      }
      return true;
    } catch (error) {
      if (!hasCode(error, 'ENOSPC', 'EDQUOT', 'EROFS')) throw error;
      // A part-written reserve would be freed as if whole: none rather than some.
      await rm(this.path, { force: true }).catch(() => undefined);
      return false;
    }
  }

  /** Frees the reserve; false when it was already gone (another process may have freed it a moment ago). */
  async release(): Promise<boolean> {
    return rm(this.path).then(
      () => true,
      () => false,
    );
  }
}
