import { constants } from 'node:fs';
import { access, lstat, mkdir, rename, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ScanError } from '@reposcan/contracts';
import type { RemoteSpec } from './remote-spec.js';

/**
 * Everything a git command for one remote runs with. simple-git v4 strips ambient `GIT_*`
 * variables and refuses our own hardening as `-c` flags (`core.hooksPath`, `protocol.allow`,
 * `core.fsmonitor`, `init.templateDir`) and `GIT_CONFIG_GLOBAL`, so the constant hardening
 * lives in a service-owned `$HOME/.gitconfig`; only the DNS pin travels as `-c`.
 */
export interface GitEnv {
  /** Wrapper script that starts git as the leader of its own process group. */
  readonly binary: string;
  /** The child's whole environment: nothing is inherited. */
  readonly env: Readonly<Record<string, string>>;
  /** `key=value` pairs passed as `-c` to every command (the DNS pin). */
  readonly config: readonly string[];
  /** Service-owned folder for per-command files, and the cwd of commands outside a clone. */
  readonly runDir: string;
  /** Text git's output must never show (a credential's forms, `withGitCredential`): scrubbed by runGit. */
  readonly secrets: readonly string[];
}

export interface GitEnvOptions {
  allowHttp: boolean;
  /** Addresses from `checkRemotePolicy`; git connects only to these. */
  pinnedAddresses: readonly string[];
  /** Where the service-owned git home is created; default `os.tmpdir()`. */
  homeRoot?: string;
  /**
   * Seconds a transfer may stay under 1 kB/s (a server that accepts and never answers included)
   * before git gives up; default 30.
   */
  stallSeconds?: number;
}

const LOW_SPEED_BYTES_PER_SECOND = 1024;
const DEFAULT_STALL_SECONDS = 30;

/** The environment, config and wrapper for git commands against `spec`. */
export async function createGitEnv(spec: RemoteSpec, options: GitEnvOptions): Promise<GitEnv> {
  if (spec.scheme === 'http' && !options.allowHttp) {
    throw new ScanError('SCHEME_NOT_ALLOWED', 'Only https URLs can be scanned on this server.');
  }
  if (options.pinnedAddresses.length === 0 || !options.pinnedAddresses.every((address) => net.isIP(address) !== 0)) {
    throw new TypeError('createGitEnv needs the IP addresses returned by checkRemotePolicy');
  }
  const home = await serviceGitHome(options.homeRoot ?? os.tmpdir());
  const protocols = options.allowHttp ? 'https:http' : 'https';
  return {
    binary: home.wrapper,
    env: {
      HOME: options.allowHttp ? home.httpHome : home.httpsHome,
      PATH: home.path,
      LC_ALL: 'C', // English messages: failures are classified by their text
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_TERMINAL_PROMPT: '0',
      GCM_INTERACTIVE: 'never',
      GIT_LFS_SKIP_SMUDGE: '1',
      GIT_PROTOCOL_FROM_USER: '0',
      GIT_ALLOW_PROTOCOL: protocols,
      GIT_LITERAL_PATHSPECS: '1', // a folder from a URL is a path, never pathspec magic
      GIT_HTTP_LOW_SPEED_LIMIT: String(LOW_SPEED_BYTES_PER_SECOND),
      GIT_HTTP_LOW_SPEED_TIME: String(options.stallSeconds ?? DEFAULT_STALL_SECONDS),
    },
    // libcurl connects to the pinned addresses whatever DNS answers by then (rebinding).
    config:
      net.isIP(spec.host) === 0
        ? [`http.curloptResolve=${spec.host}:${spec.port}:${options.pinnedAddresses.join(',')}`]
        : [],
    runDir: home.runDir,
    secrets: [],
  };
}

interface ServiceGitHome {
  wrapper: string;
  httpsHome: string;
  httpHome: string;
  runDir: string;
  path: string;
}

const homes = new Map<string, Promise<ServiceGitHome>>();

/** Created once per process and root; rewritten on start so a changed recipe always applies. */
function serviceGitHome(root: string): Promise<ServiceGitHome> {
  let home = homes.get(root);
  if (!home) {
    home = createServiceGitHome(root);
    homes.set(root, home);
    // A failed attempt (say, git missing) is retried by the next call rather than cached.
    void home.catch(() => homes.delete(root));
  }
  return home;
}

// simple-git accepts only these characters in a custom binary path.
const SAFE_BINARY_PATH = /^[a-z0-9/._~-]+$/i;

async function createServiceGitHome(root: string): Promise<ServiceGitHome> {
  const dir = path.join(path.resolve(root), `reposcan-git-${currentUid()}`);
  if (!SAFE_BINARY_PATH.test(dir)) {
    throw new Error(`The git home ${dir} may only contain letters, digits and "/._~-" (a simple-git limit)`);
  }
  await ensurePrivateDir(dir);
  const [gitPath, setsidPath] = await Promise.all([findExecutable('git'), findExecutable('setsid')]);
  const home: ServiceGitHome = {
    wrapper: path.join(dir, 'bin', 'git-in-group'),
    httpsHome: path.join(dir, 'https'),
    httpHome: path.join(dir, 'https-and-http'),
    runDir: path.join(dir, 'run'),
    path: [...new Set([path.dirname(gitPath), '/usr/bin', '/bin'])].join(':'),
  };
  for (const sub of [path.dirname(home.wrapper), home.httpsHome, home.httpHome, home.runDir]) {
    await mkdir(sub, { recursive: true, mode: 0o700 });
  }
  await writeAtomically(home.wrapper, wrapperScript(gitPath, setsidPath), 0o700);
  await writeAtomically(path.join(home.httpsHome, '.gitconfig'), hardenedGitConfig(false), 0o600);
  await writeAtomically(path.join(home.httpHome, '.gitconfig'), hardenedGitConfig(true), 0o600);
  return home;
}

/**
 * git reads this folder's config as its own: it must be ours and closed to others, or a local
 * user who created it first (it sits under a shared tmp) could plant config that runs commands.
 */
async function ensurePrivateDir(dir: string): Promise<void> {
  try {
    await mkdir(dir, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const stat = await lstat(dir);
  if (!stat.isDirectory() || stat.uid !== currentUid() || (stat.mode & 0o077) !== 0) {
    throw new Error(`The git home ${dir} must be a directory owned by this user and closed to others (mode 700)`);
  }
}

function currentUid(): number {
  const uid = process.getuid?.();
  if (uid === undefined) throw new Error('Remote clones need a POSIX host (process groups, setsid)');
  return uid;
}

async function findExecutable(name: string): Promise<string> {
  const dirs = (process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin')
    .split(path.delimiter)
    .filter((dir) => path.isAbsolute(dir));
  for (const dir of dirs) {
    const candidate = path.join(dir, name);
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this folder
    }
  }
  throw new Error(`${name} was not found on PATH; remote clones need git and setsid (util-linux)`);
}

async function writeAtomically(file: string, content: string, mode: number): Promise<void> {
  const temp = `${file}.${process.pid}.tmp`;
  await writeFile(temp, content, { mode });
  await rename(temp, file);
}

function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

/**
 * simple-git signals only the git process it spawned; helpers such as git-remote-https would
 * outlive it. `setsid` makes git the leader of a new process group (no fork: this shell is not a
 * group leader, so the pid stays), and the pid is written first so the caller can kill the group.
 * One newline goes to stderr: simple-git waits 50 ms more after a command that printed nothing
 * (read-tree, checkout-index, fetch --quiet), and callers only ever search stderr.
 */
function wrapperScript(gitPath: string, setsidPath: string): string {
  return [
    '#!/bin/sh',
    '# Written by reposcan: runs git as the leader of its own process group.',
    'printf \'%s\\n\' "$$" > "$REPOSCAN_GIT_PGID_FILE" || exit 125',
    "printf '\\n' >&2",
    `exec ${shellQuote(setsidPath)} ${shellQuote(gitPath)} "$@"`,
    '',
  ].join('\n');
}

/** No hooks, no symlinks, no redirects, no submodules, no line-ending conversion, https only, fsck on. */
function hardenedGitConfig(allowHttp: boolean): string {
  return [
    '# Written by reposcan; every git command it runs against a remote reads this and nothing else.',
    '[protocol]',
    '\tallow = never',
    '[protocol "https"]',
    '\tallow = always',
    ...(allowHttp ? ['[protocol "http"]', '\tallow = always'] : []),
    '[core]',
    '\tfsmonitor = false',
    '\thooksPath = /nonexistent-reposcan-hooks',
    '\tsymlinks = false',
    '\tquotePath = true',
    // Files keep their blobs' bytes (clone-remote.ts also switches off every attribute that converts).
    '\tautocrlf = false',
    '\teol = lf',
    '[http]',
    '\tfollowRedirects = false',
    '[submodule]',
    '\trecurse = false',
    '[transfer]',
    '\tfsckObjects = true',
    '\tbundleURI = false',
    '[safe]',
    '\tbareRepository = explicit',
    '[init]',
    '\ttemplateDir =',
    '[gc]',
    '\tauto = 0',
    '[advice]',
    '\tdetachedHead = false',
    '',
  ].join('\n');
}
