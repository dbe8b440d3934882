// Runs the real `reposcan` launcher (node + bin/reposcan.js) as a child process, piped or on
// a pseudo-terminal, the way a user or a script does.
import { execFile } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { finished } from 'node:stream/promises';
import { ZipArchive } from 'archiver';

export const LAUNCHER = fileURLToPath(new URL('../../bin/reposcan.js', import.meta.url));

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  cwd: string;
  env?: Record<string, string>;
}

/** The user cache folder of runs that name none: a temporary one, never the real ~/.cache. */
const TEST_CACHE_HOME = join(tmpdir(), `reposcan-cli-test-cache-${process.pid}`);

/** The environment every run gets: sources, not a stale dist; no inherited server choice; a cache folder of its own. */
function cliEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    REPOSCAN_CLI_FROM_SOURCE: '1',
    XDG_CACHE_HOME: TEST_CACHE_HOME,
    ...extra,
  };
  if (!('REPOSCAN_SERVER' in extra)) delete env.REPOSCAN_SERVER;
  return env;
}

/** `reposcan …args` with stdout and stderr piped (not a terminal). */
export function runCli(args: string[], options: RunOptions): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [LAUNCHER, ...args],
      { cwd: options.cwd, env: cliEnv(options.env), timeout: 120_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        if (code === null) return reject(error ?? new Error('no exit code'));
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** Single-quote for sh: the command line `script -c` runs. */
function shellQuote(arg: string): string {
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

/**
 * `reposcan …args` on a pseudo-terminal through util-linux `script`: stdout and stderr are
 * the terminal, so the CLI sees isTTY and draws its bar. Returns everything the terminal got.
 */
export function runCliInPty(args: string[], options: RunOptions): Promise<CliRun> {
  const command = [process.execPath, LAUNCHER, ...args].map(shellQuote).join(' ');
  return new Promise((resolve, reject) => {
    execFile(
      '/usr/bin/script',
      ['-qfec', command, '/dev/null'],
      { cwd: options.cwd, env: cliEnv(options.env), timeout: 120_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        if (code === null) return reject(error ?? new Error('no exit code'));
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** A loopback port with nothing listening: bound once, then released. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A .zip whose entries include a symbolic link, which the server must refuse (UNSAFE_ARCHIVE). */
export async function writeZipWithSymlink(path: string): Promise<void> {
  const archive = new ZipArchive({ zlib: { level: 6 } });
  const out = createWriteStream(path);
  archive.pipe(out);
  archive.append('# Linked\n', { name: 'repo/README.md' });
  archive.symlink('repo/passwd', '/etc/passwd');
  await archive.finalize();
  await finished(out);
}
