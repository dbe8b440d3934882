import { quoteName, unsafeArchive } from './archive-errors.js';
import type { EntryKind } from './entry-kind.js';

/**
 * Refuses entries that would land on the same path: exact duplicates (a later entry would
 * overwrite or write through an earlier one), names equal after NFC + lower-casing (they
 * collide on macOS and Windows, and a scan would differ between hosts), a name used both as a
 * file and as a folder (explicitly or as the parent of another entry), and one folder spelled
 * two ways.
 */
export class EntryCollisions {
  private readonly seen = new Map<string, { kind: EntryKind; spelling: string }>();

  add(components: readonly string[], kind: EntryKind): void {
    for (let depth = 1; depth < components.length; depth++) {
      this.record(components.slice(0, depth).join('/'), 'directory');
    }
    this.record(components.join('/'), kind);
  }

  private record(spelling: string, kind: EntryKind): void {
    const key = spelling.normalize('NFC').toLowerCase();
    const earlier = this.seen.get(key);
    if (earlier === undefined) {
      this.seen.set(key, { kind, spelling });
      return;
    }
    if (earlier.kind !== kind) {
      throw unsafeArchive(`${quoteName(spelling)} is both a file and a folder`);
    }
    if (kind === 'file' && earlier.spelling === spelling) {
      throw unsafeArchive(`the file ${quoteName(spelling)} appears twice`);
    }
    if (earlier.spelling !== spelling) {
      throw unsafeArchive(
        `${quoteName(earlier.spelling)} and ${quoteName(spelling)} differ only in letter case or Unicode normalisation`,
      );
    }
  }
}
