import type { PlannedEntry } from './inspect-central-directory.js';

/**
 * The one folder every entry sits in (`repo-main/…`, as hosts and "compress folder" make),
 * or null when there are several top-level names, a top-level file, or no entries. The name
 * is used as is: stripping `-main` or `-<sha>` would guess, and guessing is unpredictable.
 */
export function singleTopLevelFolder(entries: readonly PlannedEntry[]): string | null {
  const first = entries[0]?.components[0];
  if (first === undefined) return null;
  const shared = entries.every(
    ({ kind, components }) => components[0] === first && (components.length > 1 || kind === 'directory'),
  );
  return shared ? first : null;
}
