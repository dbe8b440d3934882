import { access, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FaultPoint } from '@reposcan/config';
import { ScanError, ScanRequestRecord, SummaryRecord, TERMINAL_STATES } from '@reposcan/contracts';
import type { ScanProgress, ScanStateRecord } from '@reposcan/contracts';
import { CarryRefusedError } from '@reposcan/core';
import type { Engine } from '@reposcan/core';
import type { EngineLimits, ScanReport, TokenCacheStats } from '@reposcan/core';
import { HandedBack } from '@reposcan/queue';
import type { CredentialVault, ScanJobContext } from '@reposcan/queue';
import type { FaultInjector, Logger } from '@reposcan/runtime';
import { filesOffDisk, prepareSource } from '@reposcan/sources';
import type { CloneRemoteOptions, PreparedSource, RemoteCommit, SourceSettings } from '@reposcan/sources';
import { artifactDirRelative, volumeRefusal } from '@reposcan/storage';
import type {
  CarriedScans,
  CommitCache,
  CommitCacheMaterial,
  ScanStore,
  StagingDirs,
  VolumeTokenCache,
} from '@reposcan/storage';
import { buildSummaryRecord, resultFromSummary } from './build-records.js';
import { classifyFailure } from './classify-failure.js';
import type { Failure } from './classify-failure.js';
import { toEngineOptions } from '@reposcan/contracts/vocabulary';
import { FileReuseSession } from './file-reuse.js';
import { OutputCarry } from './output-carry.js';
import type { FileReuseSettings } from './file-reuse.js';
import type { TokenCaches } from './token-caches.js';
import { asWorkerRefusal } from './worker-policy-refusal.js';
import type { AttemptOutcome, ScanMetrics } from './worker-metrics.js';

/** What an attempt needs of the worker's engine (createEngine); tests give their own. */
export type ScanEngine = Pick<Engine, 'runScan' | 'tokenPool' | 'prepareWalk'>;

export interface ScanAttemptDeps {
  store: ScanStore;
  sources: SourceSettings;
  limits: EngineLimits;
  scanTimeoutMs: number;
  /** The process's engine: its threads and tokenizer pools outlive one scan. */
  engine: ScanEngine;
  tokenCaches: Pick<TokenCaches, 'forScan' | 'flush'>;
  log: Logger;
  /** How often a running job checks for a cancel request (ms). */
  cancelPollMs?: number;
  metrics: ScanMetrics;
  /** Test seam (FAULT_INJECTION); does nothing without rules. */
  faults?: FaultInjector;
  now?: () => Date;
  /** A full garbage collection (fullGarbageCollection), run after a big scan; none if absent. */
  collectGarbage?: (() => void) | null;
  /** Turns the request into a tree on disk; the real one unless a test gives its own. */
  prepareSource?: typeof prepareSource;
  /** A scan does not start on a volume with less free space than this share (MIN_FREE_DISK_RATIO); 0 if absent. */
  minFreeDiskRatio?: number;
  /** Where a request's git token waits (the transport's); needed only by scans that carry one. */
  credentials?: CredentialVault;
  /** The commit cache: a completed remote scan is recorded there under its key (server settings from runtime's commitCacheSettings). */
  commitCache?: { cache: CommitCache; settings: CommitCacheMaterial['settings'] };
  /** The file cache: remote scans take the files earlier scans processed, and keep what they process. */
  fileCache?: FileReuseSettings;
  /** With the file cache: a remote scan copies the blocks of unchanged files from the newest earlier scan's outputs. */
  carriedScans?: CarriedScans;
}

class CancelledByUser extends Error {
  override readonly name = 'CancelledByUser';
}

const PROGRESS_EVERY_MS = 400;

/**
 * A ref the API resolved when it accepted the scan is cloned as it is for this long; a scan that
 * waited longer lists the remote again (its default branch or refs may have changed). A branch
 * that moved meanwhile changes nothing: the clone takes its newest commit either way.
 */
const RESOLVED_REF_FRESH_MS = 60_000;

/**
 * After a scan of at least this many bytes the worker collects its garbage before the next scan.
 * V8 lets a busy heap grow well past what is live before a full collection, and back-to-back
 * scans give it no idle time to shrink: ten rescans of the 70 MB corpus in a row took one worker's
 * peak RSS from 222 MB to 293 MB; with a full collection after each (6-10 ms) it stayed at
 * 216-243 MB. Small scans leave little garbage and would pay the collection in full.
 */
export const COLLECT_GARBAGE_AFTER_BYTES = 16 << 20;

/** What a job finds on the volume before it starts anything. */
export type AttemptStart =
  /** Deleted, or finished by an earlier attempt: nothing to do. */
  | { kind: 'skip' }
  /** Published by an earlier attempt that stopped before it wrote the state: only that is left. */
  | { kind: 'published' }
  | { kind: 'run'; state: ScanStateRecord; request: ScanRequestRecord };

export async function readAttemptStart(store: ScanStore, scanId: string): Promise<AttemptStart> {
  const state = await store.readState(scanId);
  if (!state || TERMINAL_STATES.includes(state.state)) return { kind: 'skip' };
  if (await exists(store.resultFile(scanId, 'summary.json'))) return { kind: 'published' };
  return { kind: 'run', state, request: ScanRequestRecord.parse(await store.readRequest(scanId)) };
}

/**
 * Records the completed state from the published summary: the one this attempt just wrote, or,
 * when another attempt published first (or a crash came between publish and state), the one on
 * the volume. Re-reading our own took 10-45 ms of parsing at the end of a big scan.
 */
export async function finalizeCompleted(store: ScanStore, scanId: string, ours?: SummaryRecord): Promise<void> {
  const published =
    ours ?? SummaryRecord.parse(JSON.parse(await readFile(store.resultFile(scanId, 'summary.json'), 'utf8')));
  const result = resultFromSummary(published, artifactDirRelative(scanId));
  await store.updateState(scanId, (s) => ({
    ...s,
    state: 'completed',
    completed_at: published.completed_at,
    progress: { phase: 'done', files_done: published.summary.total_files, files_total: published.summary.total_files },
    error: null,
    result,
  }));
}

/** What the engine step hands to publish: the report and how the token cache did. */
export interface EngineRun {
  report: ScanReport;
  cacheStats: TokenCacheStats;
}

/**
 * One attempt of one scan, step by step: begin, prepareSource, runEngine, publish, complete; on
 * any failure settleFailure; always close. It owns what the attempt holds meanwhile: its staging
 * folder, its abort signal (a cancel request, the deadline, or the job's own signal on shutdown
 * or a lost lock), its progress writes and its token cache.
 */
export class ScanAttempt {
  readonly scanId: string;
  readonly signal: AbortSignal;
  private readonly controller = new AbortController();
  private readonly now: () => Date;
  private readonly subject: string;
  private readonly onJobAbort: () => void;
  private readonly deadline: NodeJS.Timeout;
  private readonly cancelWatch: NodeJS.Timeout;
  private staging: StagingDirs | null = null;
  private ended: (outcome: AttemptOutcome) => void = () => {};
  private cache: VolumeTokenCache | null = null;
  /** Remote scans the file cache serves, with whole outputs: what they carry forward and keep (output-carry.ts). */
  private outputCarry: OutputCarry | null = null;
  /** The source as prepared: its commit (for the commit cache) and listing (for the next commit's carry). */
  private prepared: PreparedSource | null = null;
  /** The request's git token while a clone may need it (undefined: not read). */
  private gitToken: string | null | undefined;
  /** A remote scan's use of the file cache; null when it has none. */
  private fileReuse: FileReuseSession | null = null;
  /** Where the engine walked: the file cache looks at what it skipped. */
  private scannedRoot: string | null = null;
  private cleaning: Promise<void> | null = null;
  private lastProgressAt = 0;
  private lastPhase: ScanProgress['phase'] | null = null;
  /** The latest progress write; the store runs one scan's writes in call order, so it lands last. */
  private lastProgressWrite: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly deps: ScanAttemptDeps,
    private readonly job: ScanJobContext,
    private readonly state: ScanStateRecord,
    private readonly request: ScanRequestRecord,
  ) {
    this.scanId = job.scanId;
    this.signal = this.controller.signal;
    this.now = deps.now ?? (() => new Date());
    this.subject = request.source.type === 'upload' ? request.source.file_name : request.source.repo_path;
    this.onJobAbort = () => this.abort(job.signal.reason);
    job.signal.addEventListener('abort', this.onJobAbort, { once: true });
    this.deadline = setTimeout(
      () =>
        this.abort(
          new ScanError(
            'SCAN_TIMEOUT',
            `The scan took longer than ${Math.round(deps.scanTimeoutMs / 1000)} s and was stopped. Narrow it with include_patterns, exclude_dirs or a subfolder URL.`,
          ),
        ),
      deps.scanTimeoutMs,
    );
    this.cancelWatch = setInterval(() => {
      deps.store.isCancelRequested(this.scanId).then(
        (cancelled) => cancelled && this.abort(new CancelledByUser('cancelled')),
        () => {},
      );
    }, deps.cancelPollMs ?? 500);
  }

  /** Starts the attempt's watches. */
  static open(
    deps: ScanAttemptDeps,
    job: ScanJobContext,
    state: ScanStateRecord,
    request: ScanRequestRecord,
  ): ScanAttempt {
    const attempt = new ScanAttempt(deps, job, state, request);
    attempt.ended = deps.metrics.attemptStarted();
    return attempt;
  }

  /**
   * Makes the staging folder, unless the volume is read-only or below its free-space floor: then
   * the scan fails at once (its outcome still recorded: see the store's reserve) rather than
   * half-way through writing its outputs.
   */
  async makeStaging(): Promise<void> {
    const refusal = volumeRefusal(await this.deps.store.diskStatus(), this.deps.minFreeDiskRatio ?? 0);
    if (refusal) throw refusal;
    this.staging = await this.deps.store.createStaging(this.scanId, this.job.attempt);
  }

  /** The scan is running, at this attempt, from the first phase its source has. */
  async begin(): Promise<void> {
    const { source } = this.request;
    await this.deps.store.updateState(this.scanId, (s) => ({
      ...s,
      state: 'running',
      attempt: this.job.attempt,
      started_at: s.started_at ?? this.now().toISOString(),
      progress: {
        phase: source.type === 'upload' ? 'extract' : source.type === 'remote' ? 'clone' : 'walk',
        files_done: 0,
        files_total: 0,
      },
      error: null,
    }));
  }

  /** The tree the engine walks: a clone or an extracted upload in the staging folder, or the allowed local folder. */
  async prepareSource(): Promise<PreparedSource> {
    const { source } = this.request;
    if (source.type !== 'local') this.fault(source.type === 'upload' ? 'extract' : 'clone');
    const started = performance.now();
    // Held until the engine is done: a refused carry clones again (runEngine).
    const gitToken = (this.gitToken ??= await this.readGitToken());
    const { fileCache, carriedScans } = this.deps;
    const { options, fresh } = this.request;
    if (source.type === 'remote' && fileCache && FileReuseSession.applies(options)) {
      await this.fileReuse?.close();
      this.fileReuse = new FileReuseSession(fileCache, options, this.request.encoding, fresh !== true, this.deps.log);
    }
    if (this.fileReuse && carriedScans && OutputCarry.applies(options))
      this.outputCarry ??= new OutputCarry(carriedScans, this.deps.store, this.deps.log);
    const prepared = await (this.deps.prepareSource ?? prepareSource)(source, {
      workDir: this.stagingDirs().srcDir,
      uploadPath: source.type === 'upload' ? this.deps.store.uploadPath(this.scanId) : null,
      settings: this.deps.sources,
      signal: this.signal,
      onPhase: (phase) => this.setProgress({ phase, files_done: 0, files_total: 0 }),
      gitToken,
      baseRef: this.request.options.base_ref,
      ...(this.fileReuse ? { reuse: (resolved: RemoteCommit) => this.cloneReuse(resolved) } : {}),
      ...(source.type === 'remote' && source.resolved && this.acceptedWithin(RESOLVED_REF_FRESH_MS)
        ? { resolvedRef: source.resolved }
        : {}),
      // The ZIP bundle copies assets from disk; without it the files stay in the clone's store.
      filesInStore: this.request.options.create_zip !== true,
    }).catch((error: unknown) => {
      throw asWorkerRefusal(error, this.deps.sources);
    });
    // Cloned: the credential is of no further use, so it goes at once.
    if (gitToken !== null) await this.forgetCredential();
    this.signal.throwIfAborted();
    this.deps.metrics.sourcePrepared(source.type, secondsSince(started));
    this.prepared = prepared;
    return prepared;
  }

  /** Whether the scan was accepted at most `ms` ago. */
  private acceptedWithin(ms: number): boolean {
    return this.now().getTime() - Date.parse(this.request.created_at) <= ms;
  }

  /**
   * What the clone leaves on the server (PrepareContext.reuse): the files an earlier scan's outputs
   * can be carried over (OutputCarry, looked up while the clone runs), else those the file cache holds.
   */
  private async cloneReuse(resolved: RemoteCommit): Promise<CloneRemoteOptions['leaveOnServer']> {
    const carry = this.outputCarry;
    const material = this.commitCacheMaterial(resolved);
    if (carry && material && this.request.fresh !== true) carry.look(material);
    const fromCache = await (this.fileReuse as FileReuseSession).cloneReuse(resolved.url);
    if (!carry || !fromCache) return fromCache;
    return async (listing) => (await carry.plan(listing)) ?? fromCache(listing);
  }

  /** The request's git token, from the vault; null when the request carried none. */
  private async readGitToken(): Promise<string | null> {
    const { source } = this.request;
    if (source.type !== 'remote' || source.credential !== 'request') return null;
    const token = (await this.deps.credentials?.get(this.scanId)) ?? null;
    if (token === null)
      throw new ScanError(
        'REPO_AUTH_FAILED',
        `The git token sent with this scan has expired (it is kept for GIT_TOKEN_TTL_SECONDS, and deleted once a clone is done); submit the scan again with the token.`,
      );
    return token;
  }

  /** Best effort: a credential left behind expires with its TTL. */
  private async forgetCredential(): Promise<void> {
    const { source } = this.request;
    if (source.type !== 'remote' || source.credential !== 'request') return;
    await this.deps.credentials
      ?.delete(this.scanId)
      .catch((error: unknown) =>
        this.deps.log.warn(
          { err: error, scanId: this.scanId },
          'could not delete the git credential; it expires by itself',
        ),
      );
  }

  /**
   * The engine writes the artifacts into the staging folder, counting tokens on the worker's warm
   * pool. When it refuses to carry the outputs the clone was planned for, the source is prepared
   * again as usual and scanned.
   */
  async runEngine(prepared: PreparedSource): Promise<EngineRun> {
    try {
      return await this.scan(prepared);
    } catch (error) {
      if (!(error instanceof CarryRefusedError) || !this.outputCarry) throw error;
      this.deps.log.info({ scanId: this.scanId }, 'the earlier outputs could not be carried; cloning again');
      this.outputCarry.refuse();
      const { srcDir } = this.stagingDirs();
      await rm(srcDir, { recursive: true, force: true });
      await mkdir(srcDir);
      return await this.scan(await this.prepareSource());
    } finally {
      this.gitToken = undefined;
    }
  }

  private async scan(prepared: PreparedSource): Promise<EngineRun> {
    const { encoding } = this.request;
    const started = performance.now();
    const pool = this.deps.engine.tokenPool(encoding);
    // Threads of another encoding, or one replaced after a crash, load while the walk starts.
    pool.warm().catch(() => {});
    const cache = (this.cache = await this.deps.tokenCaches.forScan(encoding));
    const cacheStats = { hits: 0, misses: 0 };
    const fileReuse = this.fileReuse?.engineReuse(prepared);
    this.scannedRoot = prepared.root;
    const { inStore } = prepared;
    const absent = filesOffDisk(prepared);
    const earlier = this.outputCarry?.earlier();
    const report = await this.deps.engine
      .runScan(
        {
          root: prepared.root,
          repoName: prepared.repoName,
          source: prepared.source,
          sourceSkips: prepared.sourceSkips,
          ...(prepared.git ? { git: prepared.git } : {}),
          ...(prepared.changes ? { changes: prepared.changes } : {}),
          ...(absent ? { absent } : {}),
          ...(earlier ? { earlier } : {}),
          ...(this.outputCarry ? { keepLayout: true } : {}),
          options: toEngineOptions(this.request.options),
          limits: this.deps.limits,
          encoding,
          outDir: this.stagingDirs().outDir,
          signal: this.signal,
          summaryExtras: { scan_id: this.scanId, created_at: this.state.created_at },
        },
        {
          countTokens: (texts, signal) => pool.count(texts, signal),
          tokenCache: cache ? { cache, stats: cacheStats } : undefined,
          ...(fileReuse ? { fileReuse } : {}),
          ...(inStore ? { readAbsent: inStore } : {}),
        },
        (p) => {
          if (p.phase === 'walk' && p.files_done === 0) this.fault('scan');
          // Every file is counted: unless this scan's walk left its thread for the next walk (a
          // small one does), the next walk's thread boots now, while the artifacts are finished
          // and published (mostly waiting on the disk), not between scans, nor while it would
          // slow the counting (~0.1 CPU-seconds of start-up).
          else if (p.phase === 'render') this.prepareNextWalk();
          this.setProgress({ phase: p.phase, files_done: p.files_done, files_total: p.files_total });
        },
      )
      .finally(() => inStore?.close().catch(() => {}));
    this.deps.metrics.engineFinished(secondsSince(started), {
      files: report.summary.total_files,
      bytes: report.summary.total_size,
      tokens: report.summary.estimated_tokens,
      encoding,
      cache: cacheStats,
      reused: this.filesReused(report),
    });
    return { report, cacheStats };
  }

  /**
   * Publishes the staging folder with one rename. Resolves with the summary record this attempt
   * published, or undefined when another attempt had published first (its result stays).
   */
  async publish({ report }: EngineRun): Promise<SummaryRecord | undefined> {
    const total = report.summary.total_files;
    this.setProgress({ phase: 'publish', files_done: total, files_total: total });
    // completed_at is read once every progress write has landed: no progress event is later than it.
    await this.lastProgressWrite;
    const summary = buildSummaryRecord(this.scanId, report, this.state.created_at, this.now().toISOString());
    await writeFile(join(this.stagingDirs().outDir, 'summary.json'), `${JSON.stringify(summary)}\n`, { flag: 'wx' });
    this.fault('publish');
    const outcome = await this.deps.store.publish(this.scanId, this.stagingDirs().outDir);
    if (outcome === 'published') return summary;
    this.deps.log.info(
      { scanId: this.scanId, attempt: this.job.attempt },
      'another attempt published first; this one is discarded',
    );
    return undefined;
  }

  /** Records the completed state from what was published (`ours`, or the other attempt's on the volume). */
  async complete({ report, cacheStats }: EngineRun, ours: SummaryRecord | undefined): Promise<void> {
    const { log, metrics } = this.deps;
    // On the volume before anyone hears the scan is done: a rescan right after, on any worker, finds them.
    await this.deps.tokenCaches.flush(this.cache);
    if (this.fileReuse && this.scannedRoot !== null) await this.fileReuse.finish(report, this.scannedRoot);
    // Also before: a repeat request answered the moment this one is completed finds it. Until
    // the state says completed the entry is not believed (CommitCache.find).
    if (ours) await this.recordInCommitCache();
    await finalizeCompleted(this.deps.store, this.scanId, ours);
    this.ended('completed');
    metrics.scanFinished('completed');
    // After: only the next commit's scan of this line gains from it, and the client need not wait.
    if (ours) await this.keepForNextCommit(report);
    log.info(
      {
        scanId: this.scanId,
        attempt: this.job.attempt,
        files: report.summary.total_files,
        tokens: report.summary.estimated_tokens,
        cacheHits: cacheStats.hits,
        filesReused: this.filesReused(report),
        ms: report.timings.total_ms,
      },
      'scan completed',
    );
    // After the job's own work, so the collection does not delay its completion.
    if (this.deps.collectGarbage && report.summary.total_size >= COLLECT_GARBAGE_AFTER_BYTES)
      setImmediate(this.deps.collectGarbage);
  }

  /** A remote scan's result becomes findable by its commit; a failure only costs later scans the reuse. */
  private async recordInCommitCache(): Promise<void> {
    const material = this.commitCacheMaterial();
    if (!material) return;
    await this.deps.commitCache?.cache
      .record(this.scanId, material)
      .catch((error: unknown) =>
        this.deps.log.warn({ err: error, scanId: this.scanId }, 'could not record the scan in the commit cache'),
      );
  }

  /** A remote scan's outputs become findable by the next commit's scan (OutputCarry.record, best effort). */
  private async keepForNextCommit(report: ScanReport): Promise<void> {
    const material = this.commitCacheMaterial();
    if (material && this.outputCarry && this.prepared)
      await this.outputCarry.record(this.scanId, material, this.prepared, report);
  }

  /** What the commit cache keys a remote scan by; null for other sources or without the commit cache. */
  private commitCacheMaterial(identity = this.prepared?.commitIdentity): CommitCacheMaterial | null {
    const { commitCache } = this.deps;
    if (!commitCache || !identity || this.request.source.type !== 'remote') return null;
    return {
      identity,
      options: this.request.options,
      encoding: this.request.encoding,
      settings: commitCache.settings,
    };
  }

  /** Files this scan took from earlier scans: stored texts, and blocks copied from earlier outputs. */
  private filesReused(report: ScanReport): number {
    return (this.fileReuse?.reused ?? 0) + (report.carried ?? 0);
  }

  /**
   * After a step threw: the scan is cancelled (resolves), handed back to the queue, queued for
   * another attempt, or failed (each of these rejects, which is what the queue acts on).
   */
  async settleFailure(error: unknown): Promise<void> {
    // When the attempt's signal aborted, its reason says why; the error a step threw is its echo.
    const reason: unknown = this.signal.aborted ? this.signal.reason : error;
    if (reason instanceof CancelledByUser) return this.settleCancelled();
    if (this.job.signal.aborted && !(reason instanceof ScanError)) return this.handBack();
    const failure = classifyFailure(reason);
    if (failure.code === 'INTERNAL_ERROR')
      this.deps.log.error({ err: reason, scanId: this.scanId, attempt: this.job.attempt }, 'scan failed unexpectedly');
    else this.deps.log.info({ scanId: this.scanId, attempt: this.job.attempt, code: failure.code }, 'scan failed');
    await this.cleanUp();
    if (failure.retryable && this.job.failedAttempts + 1 < this.job.maxAttempts) return this.settleRetry(reason);
    return this.settleFailed(failure);
  }

  /** Stops the watches, removes the staging folder and gets the next walk's thread ready, whatever happened. */
  async close(): Promise<void> {
    this.gitToken = undefined;
    this.ended('failed'); // no-op unless a step threw before recording its outcome
    this.stopWatching();
    await this.cleanUp();
    // For the next scan, in case this one failed before its walk was over (or never walked).
    this.prepareNextWalk();
  }

  /** The user asked to cancel: staging gone first, then the state says so. */
  private async settleCancelled(): Promise<void> {
    await this.cleanUp();
    await this.forgetCredential();
    await this.deps.store
      .updateState(this.scanId, (s) => ({ ...s, state: 'cancelled', completed_at: this.now().toISOString() }))
      .catch(() => {});
    this.ended('cancelled');
    this.deps.metrics.scanFinished('cancelled');
    this.deps.log.info({ scanId: this.scanId }, 'scan cancelled');
  }

  /**
   * The worker is shutting down (or lost the job): hand the job back rather than failing it. No
   * attempt is used up. On shutdown the scan reads `queued` again, as it waits in the queue; a lost
   * job's state belongs to whoever took it over, so it is left alone.
   */
  private async handBack(): Promise<never> {
    if (this.job.signal.reason instanceof HandedBack)
      await this.deps.store
        .updateState(this.scanId, (s) => (s.state === 'running' ? backInQueue(s) : null))
        .catch((error: unknown) =>
          this.deps.log.warn({ err: error, scanId: this.scanId }, 'hand-back state write failed'),
        );
    this.ended('handed_back');
    throw new ScanError('INTERNAL_ERROR', 'The worker stopped during the scan; it will run again.', {
      retryable: true,
    });
  }

  /** Attempts are left: the scan is queued again and the queue, seeing the error, schedules the next one. */
  private async settleRetry(reason: unknown): Promise<never> {
    await this.deps.store.updateState(this.scanId, backInQueue);
    this.ended('retry');
    throw reason;
  }

  /** No attempt could help, or none is left: failed, with the code and sentence the user is shown. */
  private async settleFailed(failure: Failure): Promise<never> {
    await this.forgetCredential();
    await this.deps.store.updateState(this.scanId, (s) => ({
      ...s,
      state: 'failed',
      completed_at: this.now().toISOString(),
      error: { code: failure.code, message: failure.message },
    }));
    this.ended('failed');
    this.deps.metrics.scanFinished('failed', failure.code);
    throw new ScanError(failure.code, failure.message, { retryable: false });
  }

  /** Every change of phase is written at once; counts within a phase at most every PROGRESS_EVERY_MS. */
  private setProgress(progress: ScanProgress): void {
    const t = Date.now();
    if (progress.phase === this.lastPhase && t - this.lastProgressAt < PROGRESS_EVERY_MS) return;
    this.lastPhase = progress.phase;
    this.lastProgressAt = t;
    this.lastProgressWrite = this.deps.store
      .updateState(this.scanId, (s) => (s.state === 'running' ? { ...s, progress } : null))
      .catch((error: unknown) => this.deps.log.warn({ err: error, scanId: this.scanId }, 'progress write failed'));
  }

  private abort(reason: unknown): void {
    if (!this.controller.signal.aborted) this.controller.abort(reason);
  }

  private fault(point: FaultPoint): void {
    this.deps.faults?.hit(point, this.subject);
  }

  private prepareNextWalk(): void {
    this.deps.engine.prepareWalk();
  }

  private stagingDirs(): StagingDirs {
    if (!this.staging) throw new Error('ScanAttempt used before open() made its staging folder');
    return this.staging;
  }

  private stopWatching(): void {
    clearTimeout(this.deadline);
    clearInterval(this.cancelWatch);
    this.job.signal.removeEventListener('abort', this.onJobAbort);
  }

  /**
   * Once per attempt: before a failed, cancelled or requeued state is written (whoever waits on
   * it may look at the volume at once), or after a completed one (its answer does not wait for
   * a clone to be deleted).
   */
  private cleanUp(): Promise<void> {
    const dir = this.staging?.dir;
    return (this.cleaning ??= (async () => {
      await this.deps.tokenCaches.flush(this.cache); // counts learnt by a failed scan are as good as any
      await this.fileReuse?.close(); // what it did not commit goes; segments it read are released
      if (dir === undefined) return;
      await this.deps.store
        .removeStaging(dir)
        .catch((error: unknown) => this.deps.log.warn({ err: error, scanId: this.scanId }, 'staging cleanup failed'));
    })());
  }
}

/** The scan waits in the queue again: it reads `queued`, with no progress. */
function backInQueue(s: ScanStateRecord): ScanStateRecord {
  return { ...s, state: 'queued', progress: { phase: 'queued', files_done: 0, files_total: 0 } };
}

function secondsSince(since: number): number {
  return (performance.now() - since) / 1000;
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}
