import { mkdir, open, readdir, realpath, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ScanError } from '@reposcan/contracts';
import { IGNORE_FILE_NAMES } from '@reposcan/core/ignore-file-names';
import { shownPath } from '@reposcan/core/path-bytes';
import { withDeadline } from './deadline.js';
import { directorySize, watchDirectorySize } from './directory-size-watchdog.js';
import { classifyGitFailure } from './git-errors.js';
import type { GitEnv } from './git-env.js';
import { GitCommandError, runGit } from './git-process.js';
import { unquoteGitPath } from './quoted-git-path.js';
import { assertBranchName } from './ref-name.js';
import type { StoredBlob } from './clone-blobs.js';
import type { RemoteSpec } from './remote-spec.js';

export interface CloneRemoteOptions {
  spec: RemoteSpec;
  /** From `resolveRef`. */
  branch: string;
  /** From `resolveRef`: only this folder is checked out (sparse, blobs fetched on demand). */
  subdir?: string | null;
  /** Must not exist yet, or be empty. Removed again when the clone fails. */
  destDir: string;
  /** Wall-clock budget for the whole clone, in milliseconds. */
  deadlineMs: number;
  /** Most bytes `destDir` may hold while and after cloning. */
  maxBytes: number;
  /** From `createGitEnv` (carries the pinned addresses). */
  gitEnv: GitEnv;
  /** Aborting kills git and rejects with the signal's reason. */
  signal?: AbortSignal;
  /**
   * Whole-repository clones leave blobs larger than this on the server: each becomes a sparse
   * placeholder one byte larger, which the engine reports as `too_large` without reading (its
   * walk skips files over its per-file limit by size). Unset: every blob is fetched.
   */
  maxBlobBytes?: number;
  /**
   * Which files to leave on the server: those an earlier scan processed (a rescan), or those
   * outside the change (a change digest). A whole-repository clone then first fetches the commit's
   * trees only and asks with every regular file's blob id (by path); the paths it answers, with a
   * size, are left on the server and off the disk (ClonedRemote.absent), and only the other blobs
   * are fetched, in one request. Ignore files are fetched whatever it answers: the walk reads them.
   * It is also shown the rest of the tree (CloneListing).
   */
  leaveOnServer?: (listing: CloneListing) => Promise<ReadonlyMap<string, number>>;
  /**
   * A whole-repository clone with a blob limit or `leaveOnServer` writes out only its ignore files,
   * links and submodules; every other regular file stays in the object store (ClonedRemote.inStore),
   * for the scan to read from there (CloneBlobs). A tree with a name the scan shows quoted (not
   * UTF-8, or starting with `"`) is written out whole, as it is when this is unset.
   */
  keepInStore?: boolean;
}

/** What a clone's tree holds, as ClonedRemote gives it: its paths, its links and submodules, and its regular files' blob ids. */
export type CloneListing = Readonly<Pick<ClonedRemote, 'skips' | 'blobs'>> & { tracked: readonly string[] };

export interface ClonedRemote {
  branch: string;
  /** The commit actually checked out. */
  commit: string;
  /** Scanned folder, POSIX relative to the repository root; null for the whole tree. */
  subdir: string | null;
  /** Absolute folder to scan: `destDir`, or the subdir inside it. */
  root: string;
  /**
   * Paths (POSIX, from the repository root) that git records as a symbolic link or a submodule.
   * The checkout holds a link as a small file with the target as its text (core.symlinks=false)
   * and a submodule as an empty folder; the scan skips each with this reason, never reading it.
   */
  skips: ReadonlyMap<string, 'symlink' | 'submodule'>;
  /** Every path of the commit's tree (POSIX, from the repository root). */
  tracked: string[];
  /** The blob id of each regular file by path, but for a name the scan shows quoted (scanPath). */
  blobs: ReadonlyMap<string, string>;
  /**
   * The files `leaveOnServer` kept on the server, with the sizes it gave: not on disk at all (the
   * walk lists them from here, WalkInput.absent). Empty without `leaveOnServer`.
   */
  absent: ReadonlyMap<string, number>;
  /** With `keepInStore`: the regular files left in the object store, not on disk, by path. */
  inStore: ReadonlyMap<string, StoredBlob>;
}

/**
 * Written to `$GIT_DIR/info/attributes`, which outranks every `.gitattributes` in the tree: no
 * line-ending conversion, clean/smudge filter, `$Id$` expansion or re-encoding on checkout, so
 * each file holds exactly its blob's bytes.
 */
const NO_CHECKOUT_CONVERSIONS = '* -text -eol -filter -ident -working-tree-encoding\n';

/**
 * A shallow, single-branch, hook-free, symlink-free clone without submodules or LFS objects,
 * whose files are the commit's blobs byte for byte, under a wall-clock deadline and an on-disk
 * size limit; both kill git's whole process group.
 */
export async function cloneRemote(options: CloneRemoteOptions): Promise<ClonedRemote> {
  const { spec, branch, destDir, gitEnv, maxBytes } = options;
  assertBranchName(branch);
  const subdir = options.subdir ? checkSubdir(options.subdir) : null;
  await prepareDestination(destDir);

  const sizeLimit = new AbortController();
  const tooLarge = (): ScanError =>
    new ScanError('REPO_TOO_LARGE', `${spec.webUrl} is larger than the ${formatBytes(maxBytes)} this server clones.`);
  const stopWatchdog = watchDirectorySize(destDir, maxBytes, () => sizeLimit.abort(tooLarge()));
  const deadline = withDeadline(
    options.deadlineMs,
    () =>
      new ScanError(
        'CLONE_TIMEOUT',
        `Cloning ${spec.webUrl} took longer than ${Math.round(options.deadlineMs / 1000)} s.`,
      ),
    options.signal ? AbortSignal.any([sizeLimit.signal, options.signal]) : sizeLimit.signal,
  );
  const git = (args: string[], cwd: string): Promise<string> => runGit(args, { gitEnv, cwd, signal: deadline.signal });
  // After the clone nothing may be fetched behind our back (git fetches missing blobs lazily):
  // an empty GIT_ALLOW_PROTOCOL allows no transport at all.
  const offlineEnv: GitEnv = { ...gitEnv, env: { ...gitEnv.env, GIT_ALLOW_PROTOCOL: '' } };
  const offline: Git = (args) => runGit(args, { gitEnv: offlineEnv, cwd: destDir, signal: deadline.signal });
  const omitLarge = subdir === null && options.maxBlobBytes !== undefined;
  const leaveOnServer = subdir === null ? options.leaveOnServer : undefined;

  try {
    await git(
      [
        'clone',
        '--depth',
        '1',
        '--single-branch',
        '--no-tags',
        '--branch',
        branch,
        '--config',
        'core.symlinks=false',
        // Checked out below, once the attributes that would convert files are switched off.
        '--no-checkout',
        // A folder scan fetches only the blobs under that folder, when the server supports filters;
        // a whole-repository scan leaves out blobs it would skip as too large anyway.
        ...(subdir
          ? ['--filter=blob:none', '--sparse']
          : leaveOnServer
            ? ['--filter=blob:none']
            : omitLarge
              ? [`--filter=blob:limit=${(options.maxBlobBytes ?? 0) + 1}`]
              : []),
        '--',
        spec.cloneUrl,
        destDir,
      ],
      path.dirname(destDir),
    );
    await mkdir(path.join(destDir, '.git', 'info'), { recursive: true });
    await writeFile(path.join(destDir, '.git', 'info', 'attributes'), NO_CHECKOUT_CONVERSIONS);
    let folder: string | null = null;
    let absent: ReadonlyMap<string, number> = new Map();
    let inStore: ReadonlyMap<string, StoredBlob> = new Map();
    const keepInStore = options.keepInStore === true;
    /** HEAD's `ls-tree -r` and what it lists, when a step below has listed them already. */
    let listed: ReturnType<typeof listing> | null = null;
    /** The commit cloned, when a step below has read it already. */
    let head: string | null = null;
    if (leaveOnServer) {
      const [tree, commit] = await Promise.all([
        offline(['ls-tree', '-r', '--full-tree', 'HEAD']),
        revParseHead(offline),
      ]);
      listed = listing(tree);
      head = commit;
      const fetched = await fetchUnkept(leaveOnServer, listed, (args) => git(args, destDir), offline);
      absent = fetched.kept;
      // Every blob still missing is one left on the server: listed by the walk, no placeholder.
      inStore = await checkOutPresentBlobs(
        destDir,
        null,
        (args) => git(args, destDir),
        offline,
        { missing: fetched.missing, listing: listed.tree },
        keepInStore,
      );
    } else if (omitLarge)
      inStore = await checkOutPresentBlobs(
        destDir,
        (options.maxBlobBytes ?? 0) + 1,
        (args) => git(args, destDir),
        offline,
        undefined,
        keepInStore,
      );
    else {
      if (subdir) {
        // Read from the tree objects, so no blob is fetched to find out.
        const entry = await git(['ls-tree', '-z', 'HEAD', '--', subdir], destDir);
        folder = folderToScan(entry, subdir, spec, branch);
        await git(folder === null ? ['sparse-checkout', 'disable'] : ['sparse-checkout', 'set', '--', folder], destDir);
      }
      await git(['checkout', '-q', 'HEAD', '--'], destDir);
    }
    const commit = head ?? (await revParseHead(offline));
    const { tracked, skips, blobs } = listed ?? listing(await offline(['ls-tree', '-r', '--full-tree', commit]));
    if ((await directorySize(destDir)) > maxBytes) throw tooLarge();
    return {
      branch,
      commit,
      subdir: folder,
      root: await insideClone(destDir, folder),
      skips,
      tracked,
      blobs,
      absent,
      inStore,
    };
  } catch (error) {
    await rm(destDir, { recursive: true, force: true });
    throw error instanceof GitCommandError ? classifyGitFailure(error, spec, branch, gitEnv.secrets.length > 0) : error;
  } finally {
    stopWatchdog();
    deadline.clear();
  }
}

type Git = (args: string[]) => Promise<string>;

async function revParseHead(offline: Git): Promise<string> {
  return (await offline(['rev-parse', '--verify', 'HEAD'])).trim();
}

/** Objects of HEAD's history not in the clone (left on the server by a filter). */
async function missingObjects(offline: Git): Promise<Set<string>> {
  return new Set(
    (await offline(['rev-list', '--objects', '--missing=print', 'HEAD']))
      .split('\n')
      .filter((line) => line.startsWith('?'))
      .map((line) => line.slice(1).trim()),
  );
}

/**
 * The blobs the clone holds, read from its packs alone (no lazy fetch): none when the server
 * honoured `--filter=blob:none`, all of them when it ignored the filter.
 */
async function presentBlobs(offline: Git): Promise<Map<string, number>> {
  const present = new Map<string, number>();
  const listing = await offline([
    'cat-file',
    '--batch-all-objects',
    '--unordered',
    '--batch-check=%(objecttype) %(objectname) %(objectsize)',
  ]);
  for (const line of listing.split('\n')) {
    const [type, blob, size] = line.split(' ');
    if (type === 'blob' && blob !== undefined) present.set(blob, Number(size));
  }
  return present;
}

/**
 * After a clone without blobs: asks `leaveOnServer` which files of `listed` (HEAD's `ls-tree -r`,
 * and its regular files) to leave on the server, and fetches every other missing blob in one
 * request (as git's own lazy fetch asks, but once, not per file). Resolves with the paths left
 * behind and the sizes it gave them, and the blobs still missing.
 */
async function fetchUnkept(
  leaveOnServer: NonNullable<CloneRemoteOptions['leaveOnServer']>,
  listed: CloneListing & { tree: string },
  online: Git,
  offline: Git,
): Promise<{ kept: ReadonlyMap<string, number>; missing: Set<string> }> {
  const { tree: _tree, ...asked } = listed;
  const kept = new Map(await leaveOnServer(asked));
  for (const file of kept.keys()) if (IGNORE_FILE_NAMES.includes(path.posix.basename(file))) kept.delete(file);
  // After the answer: what it fetched on the way (a digest's diff fetches the changed files) is present.
  const present = await presentBlobs(offline);
  const wanted = new Set<string>();
  const left = new Set<string>();
  for (const record of listed.tree.split('\n')) {
    const match = /^\d+ blob ([0-9a-f]+)\t(.+)$/s.exec(record);
    if (!match || present.has(match[1] as string)) continue;
    (kept.has(unquoteGitPath(match[2] as string)) ? left : wanted).add(match[1] as string);
  }
  const ids = [...wanted];
  // The index is read from the trees alone, while the blobs arrive.
  await Promise.all([
    offline(['read-tree', 'HEAD']),
    (async () => {
      for (let i = 0; i < ids.length; i += FETCH_IDS_PER_REQUEST)
        await online([
          '-c',
          'fetch.negotiationAlgorithm=noop',
          // No `git maintenance run --auto` after it: the clone is gone within minutes.
          '-c',
          'maintenance.auto=false',
          'fetch',
          '--quiet',
          '--no-tags',
          '--no-write-fetch-head',
          '--recurse-submodules=no',
          '--filter=blob:none',
          'origin',
          ...ids.slice(i, i + FETCH_IDS_PER_REQUEST),
        ]);
    })(),
  ]);
  // A blob both kept at one path and fetched for another is in the clone now.
  for (const id of wanted) left.delete(id);
  return { kept, missing: left };
}

/** Object ids per fetch: well inside any command line's limit. */
const FETCH_IDS_PER_REQUEST = 2000;

/**
 * What an `ls-tree -r` lists. Not `-z`: its raw bytes would not survive runGit's text; quoted paths
 * do (quoted-git-path.ts).
 */
function listing(tree: string): Pick<ClonedRemote, 'tracked' | 'skips' | 'blobs'> & { tree: string } {
  return { tree, tracked: treePaths(tree), skips: linksAndSubmodules(tree), blobs: regularBlobs(tree) };
}

/**
 * A path of `ls-tree -r` as the scan names it (unquoted), or null when the scan names it otherwise:
 * a name that is not UTF-8 or that starts with `"` is shown quoted (path-bytes.ts).
 */
function scanPath(gitPath: string): string | null {
  // Unquoted, it is printable ASCII without `"`: named alike.
  if (!gitPath.startsWith('"')) return gitPath;
  const path = unquoteGitPath(gitPath);
  return shownPath(path) === path ? path : null;
}

/** Whether every path of an `ls-tree -r` listing is one the scan names as it is (scanPath). */
function namesEveryPath(lsTree: string): boolean {
  for (const match of lsTree.matchAll(/\t("[^\n]*)$/gm)) if (scanPath(match[1] as string) === null) return false;
  return true;
}

/** Regular files (modes 100644 and 100755) of `ls-tree -r`: path → blob id, for every path scanPath names. */
function regularBlobs(lsTree: string): Map<string, string> {
  const blobs = new Map<string, string>();
  for (const record of lsTree.split('\n')) {
    const match = /^100(?:644|755) blob ([0-9a-f]+)\t(.+)$/s.exec(record);
    if (!match) continue;
    const path = scanPath(match[2] as string);
    if (path !== null) blobs.set(path, match[1] as string);
  }
  return blobs;
}

/**
 * After `clone --no-checkout` with a filter: writes every file whose blob arrived and a sparse
 * placeholder of `placeholderSize` bytes for each one left on the server (none when it is null:
 * the scan takes those files from elsewhere). A plain checkout would
 * fetch the missing blobs one by one (or fail outright with fetching disabled), so only present
 * blobs are written, with no transport allowed: named one by one when they are the fewer (a
 * rescan that reuses most files), else all but the missing ones, marked skip-worktree. If a path
 * cannot be named (git's bytes did not survive decoding), the missing blobs are fetched after
 * all and no placeholder is written: slower, never wrong.
 */
async function checkOutPresentBlobs(
  destDir: string,
  placeholderSize: number | null,
  online: Git,
  offline: Git,
  /** What the caller knows already: the blobs missing and HEAD's `ls-tree -r`, the index read from HEAD. */
  known?: { missing: Set<string>; listing: string },
  keepInStore = false,
): Promise<Map<string, StoredBlob>> {
  if (!known) await offline(['read-tree', 'HEAD']);
  if (keepInStore) {
    const listing = known?.listing ?? (await offline(['ls-tree', '-r', '--full-tree', 'HEAD']));
    // inStore goes by the names the scan gives files: a tree with one it shows quoted is written out whole.
    if (namesEveryPath(listing)) return writeOutOnlyWhatIsWalked(destDir, placeholderSize, offline, listing);
  }
  const missing = known?.missing ?? (await missingObjects(offline));
  const omitted: string[] = [];
  const present: string[] = [];
  if (missing.size > 0) {
    // Paths as they are, so a quoted one (bytes outside printable ASCII) needs the `-z` listing.
    const [records, separator] =
      known && !/\t"/.test(known.listing)
        ? [known.listing, '\n']
        : [await offline(['ls-tree', '-r', '-z', 'HEAD']), '\0'];
    for (const record of records.split(separator)) {
      const match = /^\d+ blob ([0-9a-f]+)\t(.+)$/s.exec(record);
      if (match) (missing.has(match[1] as string) ? omitted : present).push(match[2] as string);
    }
  }
  try {
    if (omitted.length === 0) await offline(['checkout-index', '-a', '-f']);
    else if (present.length < omitted.length)
      for (let i = 0; i < present.length; i += PATHS_PER_CALL)
        await offline(['checkout-index', '-f', '--', ...present.slice(i, i + PATHS_PER_CALL)]);
    else {
      for (let i = 0; i < omitted.length; i += PATHS_PER_CALL)
        await offline(['update-index', '--skip-worktree', '--', ...omitted.slice(i, i + PATHS_PER_CALL)]);
      await offline(['checkout-index', '-a', '-f']);
    }
  } catch {
    await offline(['read-tree', 'HEAD']); // clears the marks: checkout-index fetches what is missing
    await online(['checkout-index', '-a', '-f']);
    return new Map();
  }
  if (placeholderSize !== null)
    for (const relPath of omitted) await writePlaceholder(destDir, relPath, placeholderSize);
  return new Map();
}

/**
 * checkOutPresentBlobs with `keepInStore`: writes out the ignore files (the walk reads them),
 * links and submodules (listed and skipped as such), a placeholder for each blob left on the server when
 * `placeholderSize` is set, and leaves every other present regular file in the object store.
 */
async function writeOutOnlyWhatIsWalked(
  destDir: string,
  placeholderSize: number | null,
  offline: Git,
  listing: string,
): Promise<Map<string, StoredBlob>> {
  const present = await presentBlobs(offline);
  const inStore = new Map<string, StoredBlob>();
  const onDisk: string[] = [];
  const omitted: string[] = [];
  for (const record of listing.split('\n')) {
    const match = /^(\d+) (blob|commit) ([0-9a-f]+)\t(.+)$/s.exec(record);
    if (!match) continue;
    const [, mode, type, blob, gitPath] = match as unknown as [string, string, string, string, string];
    const relPath = unquoteGitPath(gitPath);
    const size = present.get(blob);
    // A submodule is written out as the empty folder the walk lists and skips.
    if (type === 'commit') onDisk.push(relPath);
    else if (size === undefined) omitted.push(relPath);
    else if ((mode === '100644' || mode === '100755') && !IGNORE_FILE_NAMES.includes(path.posix.basename(relPath)))
      inStore.set(relPath, { blob, size });
    else onDisk.push(relPath);
  }
  for (let i = 0; i < onDisk.length; i += PATHS_PER_CALL)
    await offline(['checkout-index', '-f', '--', ...onDisk.slice(i, i + PATHS_PER_CALL)]);
  if (placeholderSize !== null)
    for (const relPath of omitted) await writePlaceholder(destDir, relPath, placeholderSize);
  return inStore;
}

/** Paths per git command line: well inside any system's limit. */
const PATHS_PER_CALL = 200;

/** Mode 120000 (symbolic link) and 160000 (gitlink, a submodule) entries of `ls-tree -r`. */
function linksAndSubmodules(lsTree: string): Map<string, 'symlink' | 'submodule'> {
  const skips = new Map<string, 'symlink' | 'submodule'>();
  for (const record of lsTree.split('\n')) {
    const match = /^(120000|160000) \w+ [0-9a-f]+\t(.+)$/s.exec(record);
    if (match) skips.set(unquoteGitPath(match[2] as string), match[1] === '120000' ? 'symlink' : 'submodule');
  }
  return skips;
}

/** The paths of `ls-tree -r` records (`<mode> <type> <object>\t<path>`, the path quoted as git quotes it). */
function treePaths(lsTree: string): string[] {
  const paths: string[] = [];
  for (const record of lsTree.split('\n')) {
    const tab = record.indexOf('\t');
    if (tab > 0) paths.push(unquoteGitPath(record.slice(tab + 1)));
  }
  return paths;
}

/** A sparse file (no blocks on disk) that stands for a blob left on the server. */
async function writePlaceholder(destDir: string, relPath: string, size: number): Promise<void> {
  const file = path.join(destDir, relPath);
  // git's fsck (transfer.fsckObjects) refuses ".." and ".git" in trees; checked here anyway.
  if (!file.startsWith(destDir + path.sep)) return;
  await mkdir(path.dirname(file), { recursive: true });
  const handle = await open(file, 'wx');
  try {
    await handle.truncate(size);
  } finally {
    await handle.close();
  }
}

async function prepareDestination(destDir: string): Promise<void> {
  await mkdir(path.dirname(destDir), { recursive: true });
  const existing = await readdir(destDir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [];
    throw error;
  });
  if (existing.length > 0) throw new Error(`cloneRemote: ${destDir} is not empty`);
}

/** The subdir joins destDir, so it must stay inside: plain segments only. */
function checkSubdir(subdir: string): string {
  const segments = subdir.split('/');
  if (segments.some((segment) => segment === '' || segment === '.' || segment === '..' || segment.includes('\\'))) {
    throw new ScanError('INVALID_REPO_PATH', 'The folder in the URL must be a plain relative path.');
  }
  return subdir;
}

/**
 * The folder to scan, from `ls-tree HEAD -- <subdir>`: the subdir itself, or the folder of the
 * file it names (Bitbucket's `/src/<ref>/<path>`, a `/tree/` link to a file).
 */
function folderToScan(lsTreeEntry: string, subdir: string, spec: RemoteSpec, branch: string): string | null {
  const type = /^\d+ (\w+) /.exec(lsTreeEntry)?.[1];
  if (type === 'tree') return subdir;
  if (type === 'blob') {
    const parent = path.posix.dirname(subdir);
    return parent === '.' ? null : parent;
  }
  throw new ScanError('SUBDIR_NOT_FOUND', `The folder '${subdir}' does not exist in ${spec.webUrl} at '${branch}'.`);
}

/** No links were checked out (core.symlinks=false), but the scan root is confirmed inside the clone anyway. */
async function insideClone(destDir: string, folder: string | null): Promise<string> {
  if (folder === null) return destDir;
  const root = path.join(destDir, folder);
  const [realRoot, realDest] = await Promise.all([realpath(root), realpath(destDir)]);
  if (!realRoot.startsWith(realDest + path.sep)) {
    throw new ScanError('INVALID_REPO_PATH', 'The folder in the URL leads outside the repository.');
  }
  return root;
}

function formatBytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${Math.round(bytes / (1024 * 1024))} MiB` : `${Math.round(bytes / 1024)} KiB`;
}
