import { realpath } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { ScanError } from '@reposcan/contracts';
import type { ScanRequestRecord } from '@reposcan/contracts';
import { extractZip } from './archive/index.js';
import type { ZipLimits } from './archive/index.js';
import { resolveLocalRoot } from './local/index.js';
import {
  baseCommitOf,
  buildWebSource,
  CloneBlobs,
  checkRemotePolicy,
  cloneRemote,
  createGitEnv,
  credentialFor,
  mayCarryCredential,
  parseGitCredential,
  parseRepoPath,
  readGitCredentials,
  resolveRef,
  resolveRefListing,
  withGitCredential,
} from './remote/index.js';
import type {
  CloneListing,
  ClonedRemote,
  CloneRemoteOptions,
  GitCredential,
  GitEnv,
  RemoteSourceInfo,
  RemoteSpec,
  ResolvedRef,
} from './remote/index.js';
import { diffAgainstBase } from './remote/change-set.js';
import type { ChangeSet } from './remote/change-set.js';

export interface SourceSettings {
  allowedLocalRoots: string[] | null;
  allowedHosts: string[] | '*';
  allowHttp: boolean;
  allowPrivateHosts: boolean;
  cloneTimeoutMs: number;
  /** Seconds a git transfer may stall (under 1 kB/s) before it is given up without a retry. */
  cloneStallSeconds: number;
  maxCloneBytes: number;
  /** Whole-repository clones leave larger blobs on the server (the engine skips them as too_large anyway). */
  maxBlobBytes: number;
  archive: ZipLimits;
  /** GIT_CREDENTIALS_FILE: per-host credentials, read at every clone; a request's own token wins. */
  gitCredentialsFile: string | null;
}

/**
 * `SourceInfo` of @reposcan/core, spelled out (as RemoteSourceInfo is) so this package does not
 * depend on the engine; it is assignable to `SourceInfo`.
 */
export type PreparedSourceInfo =
  | RemoteSourceInfo
  | {
      type: 'local' | 'upload';
      url: null;
      hostFamily: null;
      ref: null;
      branch: string | null;
      commit: null;
      /** A local folder below the top of its git work tree: its path there. */
      subdir: string | null;
    };

/** `GitWorkTree` of @reposcan/core, spelled out: what git knows about the tree that its files do not show. */
export interface PreparedGitTree {
  /** Paths git tracks, relative to `root`: never ignored by `.gitignore` rules. */
  tracked: readonly string[];
  /** The bytes of `.git/info/exclude`. */
  infoExclude: Uint8Array | null;
}

export interface PreparedSource {
  /** Repository root the engine walks (the subdir, if any, is in `source.subdir`). */
  root: string;
  repoName: string;
  source: PreparedSourceInfo;
  /** For the engine's walk: a remote clone's links and submodules, which it skips unread. */
  sourceSkips?: ClonedRemote['skips'];
  /** A git work tree or a clone: the files git tracks, and its exclude file. */
  git?: PreparedGitTree;
  /** A remote source: the repository, ref and commit scanned, as the commit cache keys them. */
  commitIdentity?: RemoteCommit;
  /** With `base_ref`: what changed between it and the cloned commit, for a change digest. */
  changes?: ChangeSet;
  /** A remote clone: the blob id of each regular file by path (ClonedRemote.blobs). */
  blobs?: ReadonlyMap<string, string>;
  /**
   * Files the clone left off the disk (ClonedRemote.absent): for the file cache to give, or, in a
   * change digest, files outside the change, which are listed by the walk (size 0) and never read.
   */
  absent?: ReadonlyMap<string, number>;
  /**
   * A remote clone with `filesInStore`: the files it left in its object store, for the engine to
   * read from there (its AbsentFileReader; the walk lists them by `sizes()`). Closed by the caller.
   */
  inStore?: CloneBlobs;
}

/** Every file of a prepared tree that is not on disk (the walk's `absent`): left off by the clone, or in its store. */
export function filesOffDisk(prepared: PreparedSource): ReadonlyMap<string, number> | undefined {
  const { absent, inStore } = prepared;
  return inStore ? new Map([...(absent ?? []), ...inStore.sizes()]) : absent;
}

export interface PrepareContext {
  /** Empty folder this attempt may fill (clone target or extraction target). */
  workDir: string;
  /** The uploaded archive, for upload sources. */
  uploadPath: string | null;
  settings: SourceSettings;
  signal: AbortSignal;
  onPhase: (phase: 'clone' | 'extract') => void;
  /** The request's own git credential (`token` or `user:token`), remote sources only; held in memory only. */
  gitToken?: string | null;
  /** The request's `base_ref`: a remote clone also diffs against it (a change digest). */
  baseRef?: string | null;
  /**
   * Files earlier scans of this repository processed, for a whole-repository clone to leave on the
   * server (CloneRemoteOptions.leaveOnServer); undefined when there are none. Asked once the ref is
   * resolved, before the clone, with what is known of the commit then (`commit` as the remote
   * advertised it; the clone's may be newer).
   */
  reuse?: (resolved: RemoteCommit) => Promise<CloneRemoteOptions['leaveOnServer']>;
  /** The ref as resolved moments ago (ScanRequestRecord): cloned as it is, with no `ls-remote` of its own. */
  resolvedRef?: ResolvedRef;
  /** A whole-repository clone leaves the files the scan reads in its object store (CloneRemoteOptions.keepInStore). */
  filesInStore?: boolean;
}

const NO_REMOTE = { url: null, hostFamily: null, ref: null, commit: null, subdir: null } as const;

/** Turn an accepted request into a tree on disk the engine can walk. */
export async function prepareSource(source: ScanRequestRecord['source'], ctx: PrepareContext): Promise<PreparedSource> {
  const { settings } = ctx;
  if ((ctx.baseRef ?? null) !== null && source.type !== 'remote') throw baseRefNotSupported(source.type);
  switch (source.type) {
    case 'local': {
      const local = await resolveLocalRoot(source.repo_path, settings.allowedLocalRoots);
      const tree = local.workTree;
      // A folder of a work tree is walked from the top, so the `.gitignore` files above it apply.
      return {
        root: tree?.top ?? local.root,
        repoName: local.name,
        source: { type: 'local', ...NO_REMOTE, branch: local.branch, subdir: tree?.subdir ?? null },
        ...(tree ? { git: { tracked: tree.tracked, infoExclude: tree.infoExclude } } : {}),
      };
    }
    case 'upload': {
      if (!ctx.uploadPath) throw new ScanError('INTERNAL_ERROR', 'The uploaded archive is missing.');
      ctx.onPhase('extract');
      const extracted = await extractZip({
        zipPath: ctx.uploadPath,
        destDir: ctx.workDir,
        limits: settings.archive,
        signal: ctx.signal,
      });
      const name = extracted.name ?? (basename(source.file_name).replace(/\.zip$/i, '') || 'upload');
      return { root: extracted.root, repoName: name, source: { type: 'upload', ...NO_REMOTE, branch: null } };
    }
    case 'remote': {
      // Policy and addresses checked again here, not trusted from accept time: the pinned addresses
      // are what git connects to. The ref may come from accept time (PrepareContext.resolvedRef).
      const { spec, gitEnv } = await remoteGit(source.repo_path, settings, ctx.gitToken ?? null);
      ctx.onPhase('clone');
      const ref =
        ctx.resolvedRef ??
        (await resolveRef(spec, source.branch, gitEnv, {
          timeoutMs: settings.cloneTimeoutMs,
          signal: ctx.signal,
        }));
      // The engine walks from a real path (it proves every open against it); our own folder, resolved once.
      const destDir = join(await realpath(ctx.workDir), 'repo');
      const baseRef = ctx.baseRef ?? null;
      let changes: ChangeSet | undefined;
      const diff = (base: string, subdir: string | null): Promise<ChangeSet> =>
        diffAgainstBase({
          spec,
          repoDir: destDir,
          baseRef: base,
          diffFile: join(dirname(destDir), 'change.diff'),
          subdir,
          gitEnv,
          deadlineMs: settings.cloneTimeoutMs,
          maxBytes: settings.maxCloneBytes,
          signal: ctx.signal,
        });
      // A change digest reads the changed files alone: the diff is taken once the trees are in,
      // and every other file stays on the server. (A folder's clone fetches only that folder.)
      const leaveOnServer =
        baseRef === null
          ? await ctx.reuse?.(commitOf(spec, ref, null))
          : async ({ blobs }: CloneListing): Promise<ReadonlyMap<string, number>> => {
              changes = await diff(baseRef, null);
              return outsideChange(blobs, changes);
            };
      const cloned = await cloneRemote({
        spec,
        branch: ref.branch,
        subdir: ref.subdir,
        destDir,
        deadlineMs: settings.cloneTimeoutMs,
        maxBytes: settings.maxCloneBytes,
        maxBlobBytes: settings.maxBlobBytes,
        gitEnv,
        signal: ctx.signal,
        ...(leaveOnServer ? { leaveOnServer } : {}),
        keepInStore: ctx.filesInStore === true,
      });
      if (baseRef !== null) changes ??= await diff(baseRef, cloned.subdir);
      // The engine walks from the repository root so paths and ignore files match the repository.
      return {
        root: destDir,
        repoName: spec.repo,
        source: buildWebSource(spec, cloned.branch, cloned.commit, cloned.subdir),
        sourceSkips: cloned.skips,
        // A clone holds the commit's tree only: every file is tracked, none is ignored by git.
        git: { tracked: cloned.tracked, infoExclude: null },
        commitIdentity: commitOf(spec, { ...ref, commit: cloned.commit }, changes?.baseCommit ?? null),
        blobs: cloned.blobs,
        absent: cloned.absent,
        ...(cloned.inStore.size > 0 ? { inStore: new CloneBlobs(cloned.inStore, destDir, gitEnv, ctx.signal) } : {}),
        ...(changes ? { changes } : {}),
      };
    }
  }
}

/**
 * A remote repository's spec and the environment every git process for it runs in: policy checked,
 * addresses pinned, the credential (the request's token, else GIT_CREDENTIALS_FILE's) in the
 * child's environment only.
 */
async function remoteGit(
  repoPath: string,
  settings: SourceSettings,
  gitToken: string | null,
): Promise<{ spec: RemoteSpec; gitEnv: GitEnv }> {
  const parsed = parseRepoPath(repoPath);
  if (parsed.kind !== 'remote')
    throw new ScanError('INVALID_REPO_PATH', 'The request names a local path where a repository URL was expected.');
  const spec = parsed.url;
  const pinnedAddresses = await checkRemotePolicy(spec, {
    allowedHosts: settings.allowedHosts,
    allowHttp: settings.allowHttp,
    allowPrivateHosts: settings.allowPrivateHosts,
  });
  const credential = await credentialOf(spec, gitToken, settings.gitCredentialsFile);
  const plainEnv = await createGitEnv(spec, {
    allowHttp: settings.allowHttp,
    pinnedAddresses,
    stallSeconds: settings.cloneStallSeconds,
  });
  return { spec, gitEnv: credential ? withGitCredential(plainEnv, spec, credential) : plainEnv };
}

/** What the commit cache keys a remote scan by (storage's CommitIdentity). */
export interface RemoteCommit {
  url: string;
  hostFamily: string;
  repoName: string;
  branch: string;
  commit: string;
  subdir: string | null;
  /** The commit a change digest's `base_ref` named; null for a scan that is not a digest. */
  baseCommit: string | null;
}

function commitOf(
  spec: RemoteSpec,
  ref: { branch: string; commit: string; subdir: string | null },
  baseCommit: string | null,
): RemoteCommit {
  return {
    url: spec.webUrl,
    hostFamily: spec.hostFamily,
    repoName: spec.repo,
    branch: ref.branch,
    commit: ref.commit,
    subdir: ref.subdir,
    baseCommit,
  };
}

/**
 * Which commit a remote source names now (and, with `baseRef`, which commit that names): policy
 * checked, addresses pinned, `git ls-remote` with the credential a clone would use (the request's
 * token, else GIT_CREDENTIALS_FILE's). Succeeding proves the caller can read the repository as a
 * clone would; nothing is fetched. null when `baseRef` is not one the listing can tell.
 */
export async function resolveRemoteCommit(
  source: Extract<ScanRequestRecord['source'], { type: 'remote' }>,
  ctx: {
    settings: SourceSettings;
    gitToken: string | null;
    signal?: AbortSignal;
    timeoutMs?: number;
    baseRef?: string | null;
  },
): Promise<RemoteCommit | null> {
  const { settings } = ctx;
  const { spec, gitEnv } = await remoteGit(source.repo_path, settings, ctx.gitToken);
  const { ref, refs } = await resolveRefListing(spec, source.branch, gitEnv, {
    timeoutMs: ctx.timeoutMs ?? settings.cloneTimeoutMs,
    ...(ctx.signal ? { signal: ctx.signal } : {}),
  });
  const baseRef = ctx.baseRef ?? null;
  const baseCommit = baseRef === null ? null : baseCommitOf(refs, baseRef);
  return baseRef !== null && baseCommit === null ? null : commitOf(spec, ref, baseCommit);
}

/** Every regular file of the commit but the changed ones, with no size: a digest lists them, never reads them. */
function outsideChange(blobs: ReadonlyMap<string, string>, changes: ChangeSet): Map<string, number> {
  const changed = new Set(changes.changes.map((change) => change.path));
  const outside = new Map<string, number>();
  for (const path of blobs.keys()) if (!changed.has(path)) outside.set(path, 0);
  return outside;
}

/**
 * A change digest needs two commits of one repository: an upload has none, and a local folder is
 * its files on disk (uncommitted edits included), not a commit to diff.
 */
export function baseRefNotSupported(type: 'local' | 'upload'): ScanError {
  return new ScanError(
    'BASE_REF_NOT_SUPPORTED',
    type === 'upload'
      ? 'base_ref (a change digest) needs a git repository; an uploaded archive has no history. Scan the repository by its URL, or leave base_ref out.'
      : 'base_ref (a change digest) works on remote repositories only; a local path is scanned as its files are on disk. Scan the repository by its URL, or leave base_ref out.',
  );
}

/** The request's own credential wins; else GIT_CREDENTIALS_FILE's for the host, if any. */
async function credentialOf(
  spec: RemoteSpec,
  gitToken: string | null,
  credentialsFile: string | null,
): Promise<GitCredential | null> {
  if (gitToken !== null) return parseGitCredential(gitToken);
  if (credentialsFile === null) return null;
  const credential = credentialFor(await readGitCredentials(credentialsFile), spec);
  if (credential !== null && !mayCarryCredential(spec))
    throw new ScanError(
      'GIT_TOKEN_NOT_ACCEPTED',
      `This server has a git credential for ${spec.host}, which it never sends over plain http; use the repository's https:// URL.`,
    );
  return credential;
}
