import path from 'node:path';

/**
 * True when `child` is `parent` itself or lies below it. Decided with `path.relative`, so a
 * sibling that merely shares the prefix (`/srv/allowedX` against `/srv/allowed`) is outside.
 * Both paths must already be absolute and, where it matters, real (symlinks resolved).
 */
export function isWithin(parent: string, child: string): boolean {
  const relative = path.relative(parent, child);
  return relative === '' || (relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative));
}
