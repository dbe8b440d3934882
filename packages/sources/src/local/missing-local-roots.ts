import { stat } from 'node:fs/promises';

/**
 * A warning naming the allowed roots that are not folders on this machine, or null when every
 * one is. Every local path under a missing root is refused, which an operator should hear of at
 * start rather than from each refused request (`/srv/a,/srv/b` is one path: the list is
 * ":"-separated).
 */
export async function missingLocalRootsWarning(roots: readonly string[] | null): Promise<string | null> {
  const missing: string[] = [];
  for (const root of roots ?? []) if (!(await isFolder(root))) missing.push(root);
  if (missing.length === 0) return null;
  return `ALLOWED_LOCAL_ROOTS names ${missing.length === 1 ? 'a path that is' : 'paths that are'} not a folder here (${missing.join(', ')}); local paths under ${missing.length === 1 ? 'it' : 'them'} are refused (the list is ":"-separated)`;
}

function isFolder(path: string): Promise<boolean> {
  return stat(path).then(
    (s) => s.isDirectory(),
    () => false,
  );
}
