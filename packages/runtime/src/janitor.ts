import type { Config } from '@reposcan/config';
import { isScanError, ScanRequestRecord, TERMINAL_STATES, TokenEncoding } from '@reposcan/contracts';
import type { ScanStateRecord } from '@reposcan/contracts';
import type { DeliveryQueue, ScanQueue } from '@reposcan/queue';
import { CommitCache, compactTokenCache, CorruptStateError, FileStore } from '@reposcan/storage';
import type { ScanStore } from '@reposcan/storage';
import type { Logger } from './create-logger.js';

/**
 * The janitor's settings from the configuration. Token cache upkeep belongs to processes that run
 * scans (`runsScans`); an API-only process leaves the cache alone.
 */
export function janitorSettings(
  config: Pick<
    Config,
    'scanTtlHours' | 'scanTimeoutSeconds' | 'janitorIntervalSeconds' | 'tokenCacheMaxEntries' | 'fileCacheDays'
  >,
  runsScans: boolean,
) {
  return {
    ttlHours: config.scanTtlHours,
    maxAttemptMs: config.scanTimeoutSeconds * 1000,
    intervalMs: config.janitorIntervalSeconds * 1000,
    tokenCacheMaxEntries: runsScans ? config.tokenCacheMaxEntries : 0,
    fileCacheDays: runsScans ? config.fileCacheDays : 0,
  };
}

export interface JanitorOptions {
  store: ScanStore;
  queue: ScanQueue;
  /** Where completion webhooks are queued: a delivery that could not be queued when its scan ended is queued again. */
  deliveries?: DeliveryQueue;
  log: Logger;
  /** Finished scans older than this are deleted; 0 keeps them. */
  ttlHours: number;
  /** No attempt runs longer than this (the scan deadline): older staging folders are leftovers. */
  maxAttemptMs: number;
  /** A record updated more recently than this may be mid-transition (accepted, not yet enqueued); default 30 s. */
  settleMs?: number;
  /** Where workers run: keep each encoding's token cache to this many entries in a few segments (0: leave it). */
  tokenCacheMaxEntries?: number;
  /** Where workers run: file cache segments unused for this many days are dropped (0: leave it). */
  fileCacheDays?: number;
  now?: () => number;
}

export interface SweepReport {
  expired: number;
  staleStaging: number;
  staleUploads: number;
  requeued: number;
  lost: number;
  trash: number;
  /** Token cache folders merged into one segment. */
  tokenCachesCompacted: number;
  /** Completion webhooks queued again (their queueing failed), and kept webhooks of deleted scans dropped once done. */
  webhooksRequeued: number;
  keptWebhooksDropped: number;
  /** Commit cache entries removed because their scan is gone (expired or deleted). */
  staleCacheEntries: number;
  /** File cache segments dropped as unused for FILE_CACHE_DAYS. */
  fileCacheSegmentsDropped: number;
}

const DAY_MS = 86_400_000;

/** A finished scan's webhook not recorded as tried after this long is looked at no more (its retries span 13 minutes). */
const WEBHOOK_REQUEUE_WINDOW_MS = 3_600_000;
/** A deleted scan's kept webhook is dropped after this long, whatever became of it. */
const KEPT_WEBHOOK_MAX_AGE_MS = 24 * 3_600_000;

export interface Janitor {
  /** One pass over the volume. Safe beside other janitors on other processes; concurrent calls share one pass. */
  sweep(): Promise<SweepReport>;
}

export interface RunningJanitor extends Janitor {
  stop(): Promise<void>;
}

const LOST = {
  QUEUE_LOST:
    'The queue lost this running scan (Redis restarted without its data, or its keys were removed), so no worker will finish it. Run the scan again; operators: give Redis an append-only file.',
  WORKER_CRASHED:
    'The scan was lost: its worker stopped before recording an outcome and the queue has finished with its job. Run the scan again.',
} as const;

/**
 * Keeps the volume and the queue telling the same story. State on the volume is the truth and
 * Redis only dispatches, so whatever a crash left behind is repaired from the volume: a scan
 * accepted but never enqueued (the API died in between, or Redis lost the job) is enqueued
 * again under its own id, which is idempotent; a running scan whose job is gone is failed; old
 * staging, stray upload parts and expired scans are removed. Every step is idempotent, so any
 * number of API and worker processes may run one at once.
 */
export function createJanitor(options: JanitorOptions): Janitor {
  const { store, queue, log } = options;
  const now = options.now ?? Date.now;
  const settleMs = options.settleMs ?? 30_000;
  // A staging folder is touched when its attempt starts; allow the deadline plus a margin.
  const stagingMaxAgeMs = options.maxAttemptMs + 5 * 60_000;

  const markLost = (id: string, code: keyof typeof LOST): Promise<ScanStateRecord> =>
    store.updateState(id, (s) => ({
      ...s,
      state: 'failed',
      completed_at: new Date(now()).toISOString(),
      error: { code, message: LOST[code] },
    }));

  /** A scan whose state file cannot be read still expires, by the age of its files. */
  const sweepCorrupt = async (id: string, report: SweepReport): Promise<void> => {
    const changed = await store.lastChanged(id);
    if (changed === null || options.ttlHours <= 0 || now() - changed.getTime() <= options.ttlHours * 3_600_000) return;
    if (await store.remove(id)) {
      report.expired++;
      log.warn({ scanId: id }, 'janitor: removed an expired scan whose state file is corrupt');
    }
  };

  const sweepScan = async (id: string, report: SweepReport): Promise<void> => {
    const state = await store.readState(id).catch(async (error: unknown) => {
      if (!(error instanceof CorruptStateError)) throw error;
      await sweepCorrupt(id, report);
      return null;
    });
    if (state === null) return;
    for (const staging of await store.listStaging(id)) {
      if (now() - staging.mtime.getTime() > stagingMaxAgeMs) {
        await store.removeStaging(staging.dir);
        report.staleStaging++;
      }
    }
    if (TERMINAL_STATES.includes(state.state)) {
      const finishedAt = Date.parse(state.completed_at ?? state.updated_at);
      if (options.deliveries && now() - finishedAt > settleMs && now() - finishedAt < WEBHOOK_REQUEUE_WINDOW_MS)
        await requeueWebhook(id, report);
      if (options.ttlHours > 0 && now() - finishedAt > options.ttlHours * 3_600_000 && (await store.remove(id)))
        report.expired++;
      return;
    }
    if (now() - Date.parse(state.updated_at) < settleMs) return;
    const job = await queue.jobState(id);
    if (state.state === 'queued' && job === 'absent') {
      await queue.enqueue(id);
      report.requeued++;
      log.info({ scanId: id }, 'janitor: re-enqueued a scan whose job was missing');
    } else if (job === 'absent' || job === 'completed' || job === 'failed') {
      // Running (or queued) while the queue has no job for it, or says its job is over: no
      // attempt will finish it. A job that is simply gone was lost by the queue, not a worker.
      const code = job === 'absent' ? 'QUEUE_LOST' : 'WORKER_CRASHED';
      await markLost(id, code);
      report.lost++;
      log.warn({ scanId: id, state: state.state, job, code }, 'janitor: failed a scan whose job is gone');
    }
  };

  /** The scan's webhook, when it has one that no delivery job has recorded yet: queued again (a second enqueue is a no-op). */
  const requeueWebhook = async (id: string, report: SweepReport): Promise<void> => {
    const request = ScanRequestRecord.safeParse(await store.readRequest(id).catch(() => null));
    if (!request.success || request.data.callback_url === undefined || (await store.readWebhook(id)) !== null) return;
    await options.deliveries?.enqueue(id);
    report.webhooksRequeued++;
  };

  /** Deleted scans' kept webhooks: dropped once delivered, failed or old; queued again otherwise. */
  const sweepKeptWebhooks = async (report: SweepReport): Promise<void> => {
    for (const { id, mtime } of await store.listKeptWebhooks()) {
      const kept = await store.keptWebhook(id);
      const state = kept?.delivery?.state;
      if (
        kept === null ||
        state === 'delivered' ||
        state === 'failed' ||
        now() - mtime.getTime() > KEPT_WEBHOOK_MAX_AGE_MS
      ) {
        await store.dropKeptWebhook(id);
        report.keptWebhooksDropped++;
      } else if (options.deliveries && state === undefined && now() - mtime.getTime() > settleMs) {
        await options.deliveries.enqueue(id);
        report.webhooksRequeued++;
      }
    }
  };

  let running: Promise<SweepReport> | null = null;
  const sweep = (): Promise<SweepReport> => {
    running ??= (async () => {
      const report: SweepReport = {
        expired: 0,
        staleStaging: 0,
        staleUploads: 0,
        requeued: 0,
        lost: 0,
        trash: await store.emptyTrash(),
        tokenCachesCompacted: 0,
        webhooksRequeued: 0,
        keptWebhooksDropped: 0,
        staleCacheEntries: 0,
        fileCacheSegmentsDropped: 0,
      };
      if (options.tokenCacheMaxEntries) {
        for (const encoding of TokenEncoding.options) {
          const compacted = await compactTokenCache(store.tokenCacheDir(encoding), {
            maxEntries: options.tokenCacheMaxEntries,
            now: now(),
          }).catch((error: unknown) => {
            log.warn({ err: error, encoding }, 'janitor: could not compact the token cache');
            return null;
          });
          if (compacted && compacted.segmentsMerged > 0) report.tokenCachesCompacted++;
        }
      }
      if (options.fileCacheDays)
        report.fileCacheSegmentsDropped = await new FileStore(store.fileCacheDir())
          .prune(now() - options.fileCacheDays * DAY_MS)
          .catch((error: unknown) => {
            log.warn({ err: error }, 'janitor: could not tidy the file cache');
            return 0;
          });
      report.staleUploads = await store.removeStaleUploads(stagingMaxAgeMs);
      if (await store.keepReserve().catch(() => false)) log.info('janitor: set aside the full-volume reserve again');
      for (const id of await store.listScanIds()) {
        try {
          await sweepScan(id, report);
        } catch (error) {
          // Redis down or the queue full: the next sweep tries again; one bad scan never stops the rest.
          if (isScanError(error) && (error.code === 'QUEUE_UNAVAILABLE' || error.code === 'QUEUE_FULL')) {
            log.warn({ code: error.code }, 'janitor: queue unavailable, sweep cut short');
            break;
          }
          log.warn({ scanId: id, err: error }, 'janitor: could not tidy a scan');
        }
      }
      // After expiry, so entries of the scans just removed go in the same pass.
      report.staleCacheEntries = await new CommitCache(store).sweep().catch((error: unknown) => {
        log.warn({ err: error }, 'janitor: could not tidy the commit cache');
        return 0;
      });
      await sweepKeptWebhooks(report).catch((error: unknown) => {
        log.warn({ err: error }, 'janitor: could not tidy the kept webhooks');
      });
      return report;
    })().finally(() => (running = null));
    return running;
  };
  return { sweep };
}

/**
 * A janitor that sweeps at start, then every `intervalMs` (with jitter, so the janitors of
 * several processes do not sweep in step). A record is judged once it is at least one interval
 * (and 2 s) old.
 */
export function startJanitor(options: JanitorOptions & { intervalMs: number }): RunningJanitor {
  const janitor = createJanitor({ settleMs: Math.max(2_000, options.intervalMs), ...options });
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let current: Promise<unknown> = Promise.resolve();
  const loop = (): void => {
    current = janitor
      .sweep()
      .catch((error: unknown) => options.log.warn({ err: error }, 'janitor sweep failed'))
      .finally(() => {
        if (!stopped) timer = setTimeout(loop, options.intervalMs * (0.75 + Math.random() / 2));
      });
  };
  loop();
  return {
    sweep: () => janitor.sweep(),
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await current;
    },
  };
}
