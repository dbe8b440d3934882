import { quoteName, unsafeArchive } from './archive-errors.js';
import type { ZipLimits } from './zip-limits.js';

type NameLimits = Pick<ZipLimits, 'maxDepth' | 'maxNameBytes' | 'maxComponentBytes'>;

// C0 controls, DEL and C1 controls in the decoded name.
// eslint-disable-next-line no-control-regex -- control characters are exactly what it refuses
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * The path components of an entry name, or an UNSAFE_ARCHIVE refusal.
 *
 * yauzl already rejects absolute names, `..` and backslashes (strictFileNames); these rules
 * repeat them so the policy does not hang on a library option, and add what yauzl allows:
 * control characters (checked in the raw bytes too, because yauzl decodes non-UTF-8 names as
 * CP437, which turns `\n` into `◙`), length and depth limits. Empty and `.` components are
 * dropped (`./src/a.ts` is `src/a.ts`), so the result may be empty: the archive root itself.
 */
export function entryPathComponents(name: string, rawName: Buffer, limits: NameLimits): string[] {
  const quoted = quoteName(name);
  if (rawName.some((byte) => byte < 0x20 || byte === 0x7f) || CONTROL_CHARACTER.test(name)) {
    throw unsafeArchive(`the entry name ${quoted} contains control characters`);
  }
  if (name.includes('\\')) {
    throw unsafeArchive(`the entry name ${quoted} contains a backslash`);
  }
  if (name.startsWith('/') || /^[A-Za-z]:/.test(name)) {
    throw unsafeArchive(`the entry name ${quoted} is an absolute path`);
  }
  if (Buffer.byteLength(name) > limits.maxNameBytes) {
    throw unsafeArchive(`an entry name is longer than ${limits.maxNameBytes} bytes (${quoted})`);
  }
  const components = name.split('/').filter((component) => component !== '' && component !== '.');
  if (components.includes('..')) {
    throw unsafeArchive(`the entry name ${quoted} climbs out of the archive with ".."`);
  }
  if (components.some((component) => Buffer.byteLength(component) > limits.maxComponentBytes)) {
    throw unsafeArchive(`the entry name ${quoted} has a part longer than ${limits.maxComponentBytes} bytes`);
  }
  if (components.length > limits.maxDepth) {
    throw unsafeArchive(`the entry ${quoted} is nested deeper than ${limits.maxDepth} folders`);
  }
  return components;
}

/** Finder's resource-fork folder and folder-view files: checked like any entry, never written. */
export function isMacMetadata(components: readonly string[]): boolean {
  return components[0] === '__MACOSX' || components.at(-1) === '.DS_Store';
}
