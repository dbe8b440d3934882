import { randomUUID } from 'node:crypto';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { simpleGit } from 'simple-git';
import { scrubSecrets } from './git-credential.js';
import type { GitEnv } from './git-env.js';

// The one place that runs git. Everything else builds argv and reads results.

export interface RunGitOptions {
  gitEnv: GitEnv;
  /** Working directory (must exist). Repository discovery never climbs above it. */
  cwd: string;
  /** Aborting kills git's whole process group; the call then rejects with `signal.reason`. */
  signal: AbortSignal;
}

/** git ran and failed; `output` (its stderr and stdout) is what callers classify. */
export class GitCommandError extends Error {
  override readonly name = 'GitCommandError';
  constructor(
    readonly output: string,
    options: { cause: unknown },
  ) {
    super('git failed', options);
  }
}

/** Runs `git <args>` hardened by `gitEnv` and returns its stdout. */
export async function runGit(args: readonly string[], options: RunGitOptions): Promise<string> {
  const { gitEnv, cwd, signal } = options;
  signal.throwIfAborted();
  const pgidFile = path.join(gitEnv.runDir, `${randomUUID()}.pgid`);
  const env: Record<string, string> = {
    ...gitEnv.env,
    GIT_CEILING_DIRECTORIES: path.dirname(cwd),
    REPOSCAN_GIT_PGID_FILE: pgidFile,
  };
  const git = simpleGit({
    baseDir: cwd,
    binary: gitEnv.binary,
    // A credential travels as config in the environment (git-credential.ts); the key is ours.
    ...('GIT_CONFIG_COUNT' in env ? { unsafe: { allowUnsafeConfigEnvCount: true } } : {}),
    // v4 rejects a GIT_* variable passed through .env() unless it is named here.
    allowEnvironment: Object.keys(env).filter((key) => key.startsWith('GIT_')),
    config: [...gitEnv.config],
    maxConcurrentProcesses: 1,
    // simple-git treats a run without an exit code (killed by a signal) as a success with
    // whatever output there was; only exit code 0 is one here.
    errors: (error, { exitCode, stdErr, stdOut }) =>
      error ??
      (exitCode === 0
        ? undefined
        : new Error(
            `git exited with ${exitCode ?? 'a signal'}\n${Buffer.concat([...stdErr, ...stdOut]).toString('utf8')}`,
          )),
  }).env(env);

  let settled = false;
  let killer: Promise<void> | undefined;
  const onAbort = (): void => {
    killer = killProcessGroup(pgidFile, () => settled);
  };
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    return await git.raw([...args]);
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    const output = error instanceof Error ? error.message : String(error);
    // git's text is scrubbed of the credential before anyone sees it; simple-git's error, which
    // holds the same text, stays behind when there is a credential to hide.
    throw new GitCommandError(scrubSecrets(output, gitEnv.secrets), {
      cause: gitEnv.secrets.length > 0 ? undefined : error,
    });
  } finally {
    settled = true;
    signal.removeEventListener('abort', onAbort);
    await killer;
    await rm(pgidFile, { force: true });
  }
}

/**
 * SIGKILL to the whole group (git, git-remote-https, index-pack …), repeated until simple-git
 * has seen git end: the wrapper may not have written the group id, or called setsid, yet. One
 * last round after that catches a helper that outlived git.
 */
async function killProcessGroup(pgidFile: string, isSettled: () => boolean): Promise<void> {
  for (;;) {
    const done = isSettled();
    const pgid = await readPgid(pgidFile);
    if (pgid !== null) {
      try {
        process.kill(-pgid, 'SIGKILL');
      } catch {
        // ESRCH: the group is already gone
      }
    }
    if (done) return;
    await sleep(20);
  }
}

async function readPgid(file: string): Promise<number | null> {
  try {
    const pgid = Number.parseInt(await readFile(file, 'utf8'), 10);
    return Number.isSafeInteger(pgid) && pgid > 1 ? pgid : null;
  } catch {
    return null;
  }
}
