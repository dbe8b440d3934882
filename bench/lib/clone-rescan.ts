// A production rescan of a git URL after a push: one API and worker (one DATA_DIR, so its token
// and commit caches are there as on the volume) scan the served copy of `real` cold, then again
// and again at the same commit (served by the commit cache; the later repeats timed); the copy
// gains a commit that changes one text file; the same URL is scanned again, then as a change
// digest against the first commit, then again after each of three more one-file commits; last it
// gains a commit that changes every file, digested against the one before. Each scan is a waiting
// POST /v1/scan timed to its 201.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { startGitHttpServer } from '../../packages/sources/test/remote/helpers/git-http-server.js';
import type { Corpora } from './corpora.js';
import { commitEveryFileChange, commitOneFileChange, copyServedRepo } from './served-repo.js';
import { Deployment, scanAndWait } from './reposcan-api.js';
import { measuredScan, WARMUP_DIR } from './scan-runs.js';
import type { Sample } from './scan-runs.js';

/** The file the commit changes: a Markdown file in both the full and the --quick corpus. */
export const CHANGED_FILE = 'lodash-4.17.21/README.md';
const ADDED_LINE = 'One line added by the benchmark, in a commit of its own.';

export interface CloneRescan {
  /** The copy scanned before the commit, nothing cached. */
  cold: Sample;
  /** The same URL at the same commit again, served by the commit cache (`extra.ls_remote_ms`: a `git ls-remote` of it right after). */
  cached: Sample[];
  /** The same URL after the one-file commit. */
  rescan: Sample;
  /** The same URL after each of LATER_COMMITS more one-file commits, in a row (after the digest). */
  later: Sample[];
  /** The same URL with `base_ref` at the commit before: a digest of the one change. */
  digest: Sample;
  /** After a commit that changes every file, the same URL with `base_ref` at the commit before it. */
  digestEveryFile: Sample;
}

export async function cloneRescanRun(corpora: Corpora): Promise<CloneRescan> {
  const served = await mkdtemp(join(tmpdir(), 'reposcan-bench-served-'));
  const bare = join(served, corpora.gitRepoName);
  let server: Awaited<ReturnType<typeof startGitHttpServer>> | null = null;
  const deployment = await Deployment.create();
  try {
    await mkdir(dirname(bare), { recursive: true });
    await copyServedRepo(join(corpora.gitProjectRoot, corpora.gitRepoName), bare);
    server = await startGitHttpServer(served);
    const url = `${server.origin}/${corpora.gitRepoName}`;
    const { baseUrl } = await deployment.startApi();
    const worker = await deployment.startWorker();
    await scanAndWait(baseUrl, WARMUP_DIR);

    const cold = await measuredScan(baseUrl, worker.pid, url);
    const cached = await repeatScans(baseUrl, worker.pid, url, cold.result.scan_id);
    const commit = await commitOneFileChange(bare, 'main', CHANGED_FILE, ADDED_LINE);
    const rescan = (await measuredScan(baseUrl, worker.pid, url)).sample;
    const digest = await measuredScan(baseUrl, worker.pid, url, { base_ref: commit.base });
    const changes = digest.result.changes;
    if (changes?.head_commit !== commit.head || changes.base_commit !== commit.base)
      throw new Error(
        `the change digest compared ${changes?.base_commit}..${changes?.head_commit}, not ${commit.base}..${commit.head}`,
      );
    const later: Sample[] = [];
    for (let i = 0; i < LATER_COMMITS; i++) {
      await commitOneFileChange(bare, 'main', CHANGED_FILE, `${ADDED_LINE} (${i + 2})`);
      later.push((await measuredScan(baseUrl, worker.pid, url)).sample);
    }
    const everyFile = await commitEveryFileChange(bare, 'main', ADDED_LINE);
    const digestEveryFile = await measuredScan(baseUrl, worker.pid, url, { base_ref: everyFile.base });
    return {
      cold: cold.sample,
      cached,
      rescan,
      later,
      digest: withChanges(digest),
      digestEveryFile: withChanges(digestEveryFile),
    };
  } finally {
    await deployment.close();
    await server?.close();
    await rm(served, { recursive: true, force: true });
  }
}

/** A change digest's sample, with its counts of changed files (what the report checks). */
function withChanges({ sample, result }: Awaited<ReturnType<typeof measuredScan>>): Sample {
  return { ...sample, extra: { ...sample.extra, changes: result.changes?.counts } };
}

/** One-file commits and rescans in a row after the first: a long-lived worker's steady state. */
const LATER_COMMITS = 3;

/** Repeats of the same commit: the first ones warm the API's path, as a long-lived API's is; then some timed. */
const REPEATS_WARMING = 3;
const REPEATS_TIMED = 3;

/**
 * Scans `url` again and again at the commit `coldId` scanned: each is served from the scan before
 * it (the commit cache points at the newest of equal scans). The first answers from the cache load
 * and compile that path in the API (its first ls-remotes among them) and meet the worker still
 * tidying up after the cold scan; a long-lived API is past both, so only the later ones are timed.
 */
async function repeatScans(baseUrl: string, workerPid: number, url: string, coldId: string): Promise<Sample[]> {
  const timed: Sample[] = [];
  let before = coldId;
  for (let i = 0; i < REPEATS_WARMING + REPEATS_TIMED; i++) {
    const { sample, result } = await measuredScan(baseUrl, workerPid, url);
    if (result.cached_from !== before)
      throw new Error(
        `a repeat scan of the same commit was not served from ${before} (cached_from: ${result.cached_from})`,
      );
    before = result.scan_id;
    if (i >= REPEATS_WARMING)
      timed.push({ ...sample, extra: { ...sample.extra, ls_remote_ms: await timeLsRemote(url) } });
  }
  return timed;
}

/**
 * One `git ls-remote` of `url` as the API asks it (HEAD, branches, tags), timed: what resolving
 * the ref costs a repeat scan before the commit cache can answer.
 */
async function timeLsRemote(url: string): Promise<number> {
  const started = performance.now();
  await promisify(execFile)('git', ['ls-remote', '--symref', '--', url, 'HEAD', 'refs/heads/*', 'refs/tags/*']);
  return performance.now() - started;
}
