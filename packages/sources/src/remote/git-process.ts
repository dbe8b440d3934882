import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFile, rm } from 'node:fs/promises';
import { once } from 'node:events';
import { connect, createServer } from 'node:net';
import type { OnReadOpts, Socket } from 'node:net';
import path from 'node:path';
import type { Writable } from 'node:stream';
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

/** A long-running git command fed on stdin (`cat-file --batch`), and how to stop it. */
export interface GitBatchProcess {
  stdin: Writable;
  /** Resolves when git has exited and its output has been read, with an error unless it exited with 0 after `end`. */
  exited: Promise<void>;
  /** Closes stdin, so git ends once it has answered. */
  end(): void;
  /** Kills git's process group. */
  kill(): void;
}

/**
 * Two connected Unix sockets, through one listening at `address` (in the private run folder) for
 * as long as it takes them to connect: `reader` reads into `onread`'s buffer, `writer` becomes a
 * child's stdout. Both descriptors are the sockets' own. One opened with fs (a named pipe's end,
 * say) and handed to a socket would be closed twice in a worker thread: by the socket, then, once
 * the thread exits, by Node, which closes what fs opened there and fs did not close, by then
 * perhaps another thread's descriptor.
 */
async function socketPair(address: string, onread: OnReadOpts): Promise<{ reader: Socket; writer: Socket }> {
  const server = createServer({ pauseOnConnect: true });
  try {
    server.listen(address);
    await once(server, 'listening');
    const accepted = once(server, 'connection') as Promise<[Socket]>;
    const reader = connect({ path: address, onread });
    try {
      const [[writer]] = await Promise.all([accepted, once(reader, 'connect')]);
      return { reader, writer };
    } catch (error) {
      reader.destroy();
      throw error;
    }
  } finally {
    server.close(); // which also removes the socket's file
  }
}

/** How much of git's output one read takes at most; the one buffer every read goes into. */
const OUTPUT_WINDOW = 256 * 1024;

/**
 * Starts `git <args>` hardened by `gitEnv`, fed through a pipe, for a command that answers
 * requests as they come. Its output goes to `onOutput` through one reused buffer (a view valid
 * during the call only): a pipe read the usual way allocates a buffer per read, tens of MB of
 * garbage for a repository's worth of blobs, which showed in a worker's peak memory. Only for
 * commands that read the local repository: nothing it prints is scrubbed of credentials.
 */
export async function startGitBatch(
  args: readonly string[],
  options: RunGitOptions,
  onOutput: (chunk: Uint8Array) => void,
): Promise<GitBatchProcess> {
  const { gitEnv, cwd, signal } = options;
  signal.throwIfAborted();
  const id = randomUUID();
  const pgidFile = path.join(gitEnv.runDir, `${id}.pgid`);
  // Short: a socket's path may not exceed 107 bytes, and the run folder is under TMPDIR.
  const { reader, writer } = await socketPair(path.join(gitEnv.runDir, `${id.slice(0, 12)}.sock`), {
    buffer: Buffer.allocUnsafe(OUTPUT_WINDOW),
    callback: (length, buffer) => {
      onOutput(buffer.subarray(0, length));
      return true;
    },
  });
  let child: ChildProcess;
  try {
    child = spawn(gitEnv.binary, [...gitEnv.config.flatMap((entry) => ['-c', entry]), ...args], {
      cwd,
      env: { ...gitEnv.env, GIT_CEILING_DIRECTORIES: path.dirname(cwd), REPOSCAN_GIT_PGID_FILE: pgidFile },
      stdio: ['pipe', writer, 'pipe'],
    });
  } catch (error) {
    reader.destroy();
    throw error;
  } finally {
    writer.destroy(); // git has its own copy: its exit ends the reader's stream
  }
  const { stdin, stderr: errors } = child;
  if (stdin === null || errors === null) throw new Error('git was started without its pipes');
  let stderr = '';
  errors.setEncoding('utf8').on('data', (text: string) => (stderr = (stderr + text).slice(-4096)));
  let gitDone = false;
  let killer: Promise<void> | undefined;
  const kill = (): void => {
    killer ??= killProcessGroup(pgidFile, () => gitDone);
  };
  signal.addEventListener('abort', kill, { once: true });
  let ended = false;
  const outputRead = new Promise<void>((resolve, reject) => {
    reader.on('end', resolve);
    reader.on('error', reject);
  });
  const gitExited = new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      gitDone = true;
      resolve(code);
    });
  });
  const settled = Promise.all([gitExited, outputRead])
    .then(([code]) => {
      if (code !== 0 || !ended)
        throw new GitCommandError(`git exited with ${code ?? 'a signal'}\n${stderr}`, { cause: undefined });
    })
    .catch((error: unknown) => {
      throw signal.aborted ? signal.reason : error;
    })
    .finally(async () => {
      signal.removeEventListener('abort', kill);
      reader.destroy();
      await killer;
      await rm(pgidFile, { force: true });
    });
  settled.catch(() => {});
  // A git that died is reported by `exited`; writes after it must not throw on their own.
  stdin.on('error', () => {});
  return {
    stdin,
    exited: settled,
    end: () => {
      ended = true;
      stdin.end();
    },
    kill,
  };
}
