import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';

// git has no client-side size limit: a clone is measured on disk while it runs.

/**
 * Bytes of regular files under `dir` (links not followed), each counted as the smaller of its
 * size and the blocks it occupies: a sparse placeholder for a blob left on the server takes no
 * disk. Entries that vanish mid-walk are skipped.
 */
export async function directorySize(dir: string): Promise<number> {
  let total = 0;
  const pending = [dir];
  for (let current = pending.pop(); current !== undefined; current = pending.pop()) {
    let entries;
    try {
      entries = await readdir(current, { withFileTypes: true });
    } catch {
      continue; // not created yet, or removed by git while we looked
    }
    for (const entry of entries) {
      const entryPath = path.join(current, entry.name);
      if (entry.isDirectory()) {
        pending.push(entryPath);
      } else if (entry.isFile()) {
        total += await lstat(entryPath).then(
          (stat) => Math.min(stat.size, stat.blocks * 512),
          () => 0,
        );
      }
    }
  }
  return total;
}

/**
 * Polls `dir` until stopped; calls `onExceeded` once if it grows past `maxBytes`. Polls never
 * overlap, so a huge tree slows the watchdog down instead of piling up walks.
 */
export function watchDirectorySize(
  dir: string,
  maxBytes: number,
  onExceeded: (bytes: number) => void,
  intervalMs = 250,
): () => void {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const poll = async (): Promise<void> => {
    const bytes = await directorySize(dir);
    if (stopped) return;
    if (bytes > maxBytes) {
      onExceeded(bytes);
      return;
    }
    timer = setTimeout(() => void poll(), intervalMs);
  };
  timer = setTimeout(() => void poll(), intervalMs);
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
