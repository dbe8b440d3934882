import { randomBytes } from 'node:crypto';
import { rm, statfs, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface DiskStatus {
  /** Share of the volume's blocks available to this (unprivileged) process, 0..1. */
  freeRatio: number;
  freeBytes: number;
  /** A probe file could be created and removed in the data folder. */
  writable: boolean;
}

/** Feeds the 507 disk floor and `/ready`; never throws, so a vanished volume reads as "0 free, not writable". */
export async function readDiskStatus(dir: string): Promise<DiskStatus> {
  const [space, writable] = await Promise.all([freeSpace(dir), probeWrite(dir)]);
  return { ...space, writable };
}

async function freeSpace(dir: string): Promise<Pick<DiskStatus, 'freeRatio' | 'freeBytes'>> {
  try {
    const stats = await statfs(dir);
    return { freeRatio: stats.blocks > 0 ? stats.bavail / stats.blocks : 0, freeBytes: stats.bavail * stats.bsize };
  } catch {
    return { freeRatio: 0, freeBytes: 0 };
  }
}

async function probeWrite(dir: string): Promise<boolean> {
  const probe = join(dir, `.probe.${randomBytes(6).toString('hex')}`);
  try {
    await writeFile(probe, 'ok', { flag: 'wx' });
    return true;
  } catch {
    return false;
  } finally {
    await rm(probe, { force: true }).catch(() => undefined);
  }
}
