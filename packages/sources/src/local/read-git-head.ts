import { constants } from 'node:fs';
import { lstat, open } from 'node:fs/promises';
import path from 'node:path';
import { isAt } from '@reposcan/core/proven-path';

// A real HEAD is one short line; anything larger is not a HEAD file we trust.
const HEAD_BYTE_CAP = 512;
const HEAD_BRANCH = /^ref: refs\/heads\/(\S+)\s*$/;
// Roughly git's check-ref-format: no controls, spaces or `~^:?*[\`, no `..`, no empty component.
// eslint-disable-next-line no-control-regex -- control characters are exactly what it refuses
const SAFE_BRANCH = /^(?!.*\.\.)(?!.*\/\/)(?!\/)(?!.*\/$)[^\x00-\x20\x7f~^:?*[\\]{1,255}$/;

/**
 * The branch named in `<root>/.git/HEAD`, or null (detached HEAD, no repository, anything odd).
 *
 * Reads the file itself and never runs git: a user's `.git/config` can make git execute
 * commands (`core.fsmonitor`, hooks, aliases). Neither `.git` nor `HEAD` may be a symbolic
 * link, and the file opened must really be `<root>/.git/HEAD` (`root` is a real path), so the read
 * cannot be pointed outside the root, not even by `.git` swapped for a link after the check;
 * `O_NONBLOCK` keeps a FIFO named HEAD from hanging the open. Every failure means "no branch" —
 * the branch is information only.
 */
export async function readGitHead(root: string): Promise<string | null> {
  const gitDir = path.join(root, '.git');
  try {
    // A `.git` file (worktree or submodule: `gitdir: …`) points elsewhere; we don't follow it.
    if (!(await lstat(gitDir)).isDirectory()) return null;
  } catch {
    return null;
  }
  const headPath = path.join(gitDir, 'HEAD');
  let handle;
  try {
    handle = await open(headPath, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    if (!(await isAt(handle.fd, headPath))) return null;
    if (!(await handle.stat()).isFile()) return null;
    const buffer = Buffer.alloc(HEAD_BYTE_CAP + 1);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    if (bytesRead > HEAD_BYTE_CAP) return null;
    const branch = HEAD_BRANCH.exec(buffer.toString('utf8', 0, bytesRead))?.[1];
    return branch !== undefined && SAFE_BRANCH.test(branch) ? branch : null;
  } catch {
    return null;
  } finally {
    await handle.close();
  }
}
