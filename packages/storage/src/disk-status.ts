import { randomBytes } from 'node:crypto';
import { rm, statfs, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ScanError } from '@reposcan/contracts';
import { hasCode } from './has-code.js';

export interface DiskStatus {
  /** Share of the volume's blocks available to this (unprivileged) process, 0..1. */
  freeRatio: number;
  freeBytes: number;
  /** A probe file could be created and removed in the data folder. */
  writable: boolean;
  /** The probe was refused because the volume is mounted read-only (EROFS). */
  readOnly: boolean;
}

/** Feeds the 507 disk floor and `/ready`; never throws, so a vanished volume reads as "0 free, not writable". */
export async function readDiskStatus(dir: string): Promise<DiskStatus> {
  const [space, refusal] = await Promise.all([freeSpace(dir), probeWrite(dir)]);
  return { ...space, writable: refusal === null, readOnly: hasCode(refusal, 'EROFS') };
}

async function freeSpace(dir: string): Promise<Pick<DiskStatus, 'freeRatio' | 'freeBytes'>> {
  try {
    const stats = await statfs(dir);
    return { freeRatio: stats.blocks > 0 ? stats.bavail / stats.blocks : 0, freeBytes: stats.bavail * stats.bsize };
  } catch {
    return { freeRatio: 0, freeBytes: 0 };
  }
}

/** Null when a probe file could be written, else why not. */
async function probeWrite(dir: string): Promise<unknown> {
  const probe = join(dir, `.probe.${randomBytes(6).toString('hex')}`);
  try {
    await writeFile(probe, 'ok', { flag: 'wx' });
    return null;
  } catch (error) {
    return error ?? new Error('write refused');
  } finally {
    await rm(probe, { force: true }).catch(() => undefined);
  }
}

/**
 * Why the volume takes no new scan now, or null: read-only (VOLUME_READ_ONLY), or under
 * `minFreeRatio` free or refusing writes (DISK_FULL). Checked when a scan is submitted and again
 * when a worker starts it, so work is refused before it is half-built rather than failed after.
 */
export function volumeRefusal(disk: DiskStatus, minFreeRatio: number): ScanError | null {
  if (disk.readOnly)
    return new ScanError(
      'VOLUME_READ_ONLY',
      'The data volume is mounted read-only, so no scan can be written or removed; the operator must make DATA_DIR writable again. Retry later.',
      { retryAfterSeconds: 60 },
    );
  if (!disk.writable || disk.freeRatio < minFreeRatio)
    return new ScanError(
      'DISK_FULL',
      'The data volume is low on space (under MIN_FREE_DISK_RATIO free) and takes no new scans until expired scans are removed or space is freed. Retry later.',
      { retryAfterSeconds: 60 },
    );
  return null;
}
