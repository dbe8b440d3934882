import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';

/**
 * reposcan's folder in the user's cache: `$XDG_CACHE_HOME/reposcan`, else `~/.cache/reposcan`.
 * It holds the --local token cache and, when the current folder lies inside the scanned one,
 * the default output folder. Everything in it can be deleted at any time.
 */
export function userCacheFolder(env: NodeJS.ProcessEnv): string {
  // The XDG rule: a relative value is invalid and ignored.
  const xdg = env.XDG_CACHE_HOME;
  const base = xdg && isAbsolute(xdg) ? xdg : join(env.HOME || homedir(), '.cache');
  return join(base, 'reposcan');
}
