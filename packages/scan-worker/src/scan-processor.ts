import { access, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ScanError, ScanRequestRecord, SummaryRecord, TERMINAL_STATES } from '@reposcan/contracts';
import type { ScanProgress } from '@reposcan/contracts';
import { prepareWalkThread, runScan } from '@reposcan/core';
import type { EngineLimits } from '@reposcan/core';
import type { ScanJobContext, ScanProcessor } from '@reposcan/queue';
import { artifactDirRelative } from '@reposcan/storage';
import type { ScanStore } from '@reposcan/storage';
import type { FaultInjector, Logger } from '@reposcan/runtime';
import { prepareSource } from '@reposcan/sources';
import type { SourceSettings } from '@reposcan/sources';
import { buildSummaryRecord, resultFromSummary } from './build-records.js';
import { classifyFailure } from './classify-failure.js';
import { toEngineOptions } from './to-engine-options.js';
import type { TokenCaches } from './token-caches.js';
import type { TokenPools } from './token-pools.js';
import type { ScanMetrics } from './worker-metrics.js';

export interface ScanProcessorDeps {
  store: ScanStore;
  sources: SourceSettings;
  limits: EngineLimits;
  scanTimeoutMs: number;
  tokenPools: TokenPools;
  tokenCaches: TokenCaches;
  log: Logger;
  /** How often a running job checks for a cancel request (ms). */
  cancelPollMs?: number;
  metrics: ScanMetrics;
  /** Test seam (FAULT_INJECTION); does nothing without rules. */
  faults?: FaultInjector;
  now?: () => Date;
  /** A full garbage collection (fullGarbageCollection), run after a big scan; none if absent. */
  collectGarbage?: (() => void) | null;
}

class CancelledByUser extends Error {
  override readonly name = 'CancelledByUser';
}

const PROGRESS_EVERY_MS = 400;

/**
 * After a scan of at least this many bytes the worker collects its garbage before the next scan.
 * V8 lets a busy heap grow well past what is live before a full collection, and back-to-back
 * scans give it no idle time to shrink: ten rescans of the 70 MB corpus in a row took one worker's
 * peak RSS from 222 MB to 293 MB; with a full collection after each (6-10 ms) it stayed at
 * 216-243 MB. Small scans leave little garbage and would pay the collection in full.
 */
export const COLLECT_GARBAGE_AFTER_BYTES = 16 << 20;

/**
 * One scan attempt: read the accepted request from the volume, build the tree, run the engine
 * into a private staging folder, publish it with one rename, then record the final state.
 * Safe to run twice for the same scan: the first publish wins and state never leaves a
 * terminal value.
 */
export function createScanProcessor(deps: ScanProcessorDeps): ScanProcessor {
  const { store, log, metrics } = deps;
  const now = deps.now ?? (() => new Date());

  /**
   * Records the completed state from the published summary: the one this attempt just wrote, or,
   * when another attempt published first (or a crash came between publish and state), the one on
   * the volume. Re-reading our own took 10-45 ms of parsing at the end of a big scan.
   */
  const finalizeCompleted = async (scanId: string, ours?: SummaryRecord): Promise<void> => {
    const published = ours ?? SummaryRecord.parse(JSON.parse(await readFile(store.resultFile(scanId, 'summary.json'), 'utf8')));
    const result = resultFromSummary(published, artifactDirRelative(scanId));
    await store.updateState(scanId, (s) => ({
      ...s,
      state: 'completed',
      completed_at: published.completed_at,
      progress: { phase: 'done', files_done: published.summary.total_files, files_total: published.summary.total_files },
      error: null,
      result,
    }));
  };

  return async (job: ScanJobContext): Promise<void> => {
    const { scanId, attempt, maxAttempts } = job;
    const state = await store.readState(scanId);
    if (!state || TERMINAL_STATES.includes(state.state)) return; // deleted, or finished by an earlier attempt
    if (await exists(store.resultFile(scanId, 'summary.json'))) return finalizeCompleted(scanId); // published, state not yet written
    const request = ScanRequestRecord.parse(await store.readRequest(scanId));
    const subject = request.source.type === 'upload' ? request.source.file_name : request.source.repo_path;
    const fault = (point: Parameters<FaultInjector['hit']>[0]): void => deps.faults?.hit(point, subject);

    const controller = new AbortController();
    const abort = (reason: unknown): void => {
      if (!controller.signal.aborted) controller.abort(reason);
    };
    const onJobAbort = (): void => abort(job.signal.reason);
    job.signal.addEventListener('abort', onJobAbort, { once: true });
    const deadline = setTimeout(
      () => abort(new ScanError('SCAN_TIMEOUT', `The scan took longer than ${Math.round(deps.scanTimeoutMs / 1000)} s and was stopped. Narrow it with include_patterns, exclude_dirs or a subfolder URL.`)),
      deps.scanTimeoutMs,
    );
    const cancelWatch = setInterval(() => {
      store.isCancelRequested(scanId).then(
        (cancelled) => cancelled && abort(new CancelledByUser('cancelled')),
        () => {},
      );
    }, deps.cancelPollMs ?? 500);

    let lastProgressAt = 0;
    let lastPhase: ScanProgress['phase'] | null = null;
    /** Every change of phase is written at once; counts within a phase at most every PROGRESS_EVERY_MS. */
    const setProgress = (progress: ScanProgress): void => {
      const t = Date.now();
      if (progress.phase === lastPhase && t - lastProgressAt < PROGRESS_EVERY_MS) return;
      lastPhase = progress.phase;
      lastProgressAt = t;
      store.updateState(scanId, (s) => (s.state === 'running' ? { ...s, progress } : null)).catch((error: unknown) => log.warn({ err: error, scanId }, 'progress write failed'));
    };

    const staging = await store.createStaging(scanId, attempt);
    const ended = metrics.attemptStarted();
    let cache: Awaited<ReturnType<TokenCaches['forScan']>> = null;
    // Once per attempt: before a failed, cancelled or requeued state is written (whoever waits on
    // it may look at the volume at once), or after a completed one (its answer does not wait for
    // a clone to be deleted).
    let cleaning: Promise<void> | null = null;
    const cleanUp = (): Promise<void> =>
      (cleaning ??= (async () => {
        await deps.tokenCaches.flush(cache); // counts learnt by a failed scan are as good as any
        await store.removeStaging(staging.dir).catch((error: unknown) => log.warn({ err: error, scanId }, 'staging cleanup failed'));
      })());
    const seconds = (since: number): number => (performance.now() - since) / 1000;
    try {
      await store.updateState(scanId, (s) => ({
        ...s,
        state: 'running',
        attempt,
        started_at: s.started_at ?? now().toISOString(),
        progress: { phase: request.source.type === 'upload' ? 'extract' : request.source.type === 'remote' ? 'clone' : 'walk', files_done: 0, files_total: 0 },
        error: null,
      }));
      if (request.source.type !== 'local') fault(request.source.type === 'upload' ? 'extract' : 'clone');
      const preparing = performance.now();
      const prepared = await prepareSource(request.source, {
        workDir: staging.srcDir,
        uploadPath: request.source.type === 'upload' ? store.uploadPath(scanId) : null,
        settings: deps.sources,
        signal: controller.signal,
        onPhase: (phase) => setProgress({ phase, files_done: 0, files_total: 0 }),
      });
      controller.signal.throwIfAborted();
      metrics.sourcePrepared(request.source.type, seconds(preparing));

      const scanning = performance.now();
      const pool = deps.tokenPools.get(request.encoding);
      // Threads of another encoding, or one replaced after a crash, load while the walk starts.
      pool.warm().catch(() => {});
      cache = await deps.tokenCaches.forScan(request.encoding);
      const cacheStats = { hits: 0, misses: 0 };
      const report = await runScan(
        {
          root: prepared.root,
          repoName: prepared.repoName,
          source: prepared.source,
          sourceSkips: prepared.sourceSkips,
          options: toEngineOptions(request.options),
          limits: deps.limits,
          encoding: request.encoding,
          outDir: staging.outDir,
          signal: controller.signal,
          summaryExtras: { scan_id: scanId, created_at: state.created_at },
        },
        { countTokens: (texts, signal) => pool.count(texts, signal), tokenCache: cache ? { cache, stats: cacheStats } : undefined },
        (p) => {
          if (p.phase === 'walk' && p.files_done === 0) fault('scan');
          // Every file is counted: unless this scan's walk left its thread for the next walk (a
          // small one does), the next walk's thread boots now, while the artifacts are finished
          // and published (mostly waiting on the disk), not between scans, nor while it would
          // slow the counting (~0.1 CPU-seconds of start-up).
          else if (p.phase === 'render') prepareWalkThread();
          setProgress({ phase: p.phase, files_done: p.files_done, files_total: p.files_total });
        },
      );

      metrics.engineFinished(seconds(scanning), { files: report.summary.total_files, bytes: report.summary.total_size, tokens: report.summary.estimated_tokens, encoding: request.encoding, cache: cacheStats });
      setProgress({ phase: 'publish', files_done: report.summary.total_files, files_total: report.summary.total_files });
      const summary = buildSummaryRecord(scanId, report, state.created_at, now().toISOString());
      await writeFile(join(staging.outDir, 'summary.json'), `${JSON.stringify(summary)}\n`, { flag: 'wx' });
      fault('publish');
      const outcome = await store.publish(scanId, staging.outDir);
      if (outcome === 'already-published') log.info({ scanId, attempt }, 'another attempt published first; this one is discarded');
      // On the volume before anyone hears the scan is done: a rescan right after, on any worker, finds them.
      await deps.tokenCaches.flush(cache);
      await finalizeCompleted(scanId, outcome === 'published' ? summary : undefined);
      ended('completed');
      metrics.scanFinished('completed');
      log.info({ scanId, attempt, files: report.summary.total_files, tokens: report.summary.estimated_tokens, cacheHits: cacheStats.hits, ms: report.timings.total_ms }, 'scan completed');
      // After the job's own work, so the collection does not delay its completion.
      if (deps.collectGarbage && report.summary.total_size >= COLLECT_GARBAGE_AFTER_BYTES) setImmediate(deps.collectGarbage);
    } catch (error) {
      const reason: unknown = controller.signal.aborted ? controller.signal.reason : error;
      if (reason instanceof CancelledByUser) {
        await cleanUp();
        await store.updateState(scanId, (s) => ({ ...s, state: 'cancelled', completed_at: now().toISOString() })).catch(() => {});
        ended('cancelled');
        metrics.scanFinished('cancelled');
        log.info({ scanId }, 'scan cancelled');
        return;
      }
      if (job.signal.aborted && !(reason instanceof ScanError)) {
        // The worker is shutting down: hand the job back rather than failing it.
        ended('handed_back');
        throw new ScanError('INTERNAL_ERROR', 'The worker stopped during the scan; it will run again.', { retryable: true });
      }
      const failure = classifyFailure(reason);
      if (failure.code === 'INTERNAL_ERROR') log.error({ err: reason, scanId, attempt }, 'scan failed unexpectedly');
      else log.info({ scanId, attempt, code: failure.code }, 'scan failed');
      await cleanUp();
      if (failure.retryable && attempt < maxAttempts) {
        await store.updateState(scanId, (s) => ({ ...s, state: 'queued', progress: { phase: 'queued', files_done: 0, files_total: 0 } }));
        ended('retry');
        throw reason;
      }
      await store.updateState(scanId, (s) => ({ ...s, state: 'failed', completed_at: now().toISOString(), error: { code: failure.code, message: failure.message } }));
      ended('failed');
      metrics.scanFinished('failed', failure.code);
      throw new ScanError(failure.code, failure.message, { retryable: false });
    } finally {
      ended('failed'); // no-op unless a path above threw before recording its outcome
      clearTimeout(deadline);
      clearInterval(cancelWatch);
      job.signal.removeEventListener('abort', onJobAbort);
      await cleanUp();
      // For the next scan, in case this one failed before its walk was over (or never walked).
      prepareWalkThread();
    }
  };
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}
