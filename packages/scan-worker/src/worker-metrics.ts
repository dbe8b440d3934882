import { Counter, Gauge, Histogram } from 'prom-client';
import type { Registry } from 'prom-client';

/** How one attempt of a scan ended in this process. */
export type AttemptOutcome = 'completed' | 'failed' | 'cancelled' | 'retry' | 'handed_back';
export type ScanSourceType = 'remote' | 'upload' | 'local';

/** What a scan worker reports to Prometheus; every method is cheap and never throws. */
export interface ScanMetrics {
  /** A scan attempt starts running; call the returned function once it has ended. */
  attemptStarted(): (outcome: AttemptOutcome) => void;
  /** The source is on disk: a remote clone, an upload extraction or a local tree link. */
  sourcePrepared(source: ScanSourceType, seconds: number): void;
  /** The engine finished (walk, read, count, render, bundle) over these totals. */
  engineFinished(
    seconds: number,
    totals: {
      files: number;
      bytes: number;
      tokens: number;
      encoding: string;
      cache: { hits: number; misses: number };
      /** Files taken from the file cache: neither fetched nor read. */
      reused: number;
    },
  ): void;
  /** A scan reached a terminal state here; `code` is empty for completed and cancelled. */
  scanFinished(state: 'completed' | 'failed' | 'cancelled', code?: string): void;
}

// From a quick local tree to a clone at its deadline (CLONE_TIMEOUT_SECONDS, SCAN_TIMEOUT_SECONDS).
const DURATION_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];

/** Registers the worker's metrics on `registry`: the worker's own one, or the API's in embedded mode. */
export function createScanMetrics(registry: Registry): ScanMetrics {
  const registers = [registry];
  const running = new Gauge({
    name: 'reposcan_scans_running',
    help: 'Scan attempts running in this process',
    registers,
  });
  const attempts = new Counter({
    name: 'reposcan_scan_attempts_total',
    help: 'Scan attempts ended in this process, by outcome (retry: failed and queued again; handed_back: stopped by shutdown or a lost lock, left to run again)',
    labelNames: ['outcome'],
    registers,
  });
  const attemptDuration = new Histogram({
    name: 'reposcan_scan_attempt_duration_seconds',
    help: 'Whole scan attempt, source preparation to outcome',
    labelNames: ['outcome'],
    buckets: DURATION_BUCKETS,
    registers,
  });
  const finished = new Counter({
    name: 'reposcan_scans_finished_total',
    help: 'Scans that reached a terminal state in this process, by state and error code',
    labelNames: ['state', 'code'],
    registers,
  });
  const clone = new Histogram({
    name: 'reposcan_clone_duration_seconds',
    help: 'Remote git clone and checkout',
    buckets: DURATION_BUCKETS,
    registers,
  });
  const extract = new Histogram({
    name: 'reposcan_extract_duration_seconds',
    help: 'Uploaded ZIP extraction',
    buckets: DURATION_BUCKETS,
    registers,
  });
  const engine = new Histogram({
    name: 'reposcan_scan_duration_seconds',
    help: 'Engine run of a scan: walk, read, count tokens, render, bundle',
    buckets: DURATION_BUCKETS,
    registers,
  });
  const files = new Counter({
    name: 'reposcan_scanned_files_total',
    help: 'Files kept by completed engine runs',
    registers,
  });
  const bytes = new Counter({
    name: 'reposcan_scanned_bytes_total',
    help: 'Bytes of kept files read by completed engine runs',
    registers,
  });
  const tokens = new Counter({
    name: 'reposcan_scanned_tokens_total',
    help: 'Tokens counted by completed engine runs, by encoding',
    labelNames: ['encoding'],
    registers,
  });
  const cacheLookups = new Counter({
    name: 'reposcan_token_cache_lookups_total',
    help: 'Text files looked up in the shared token cache by completed engine runs: hit (not counted again) or miss',
    labelNames: ['result'],
    registers,
  });

  const filesReused = new Counter({
    name: 'reposcan_files_reused_total',
    help: 'Files completed engine runs took from the file cache (an earlier scan processed the same blob at the same path): neither fetched, read nor counted',
    registers,
  });

  for (const outcome of ['completed', 'failed', 'cancelled', 'retry', 'handed_back'] satisfies AttemptOutcome[])
    attempts.inc({ outcome }, 0);

  return {
    attemptStarted() {
      running.inc();
      const end = attemptDuration.startTimer();
      let ended = false;
      return (outcome) => {
        if (ended) return;
        ended = true;
        running.dec();
        attempts.inc({ outcome });
        end({ outcome });
      };
    },
    sourcePrepared(source, seconds) {
      if (source === 'remote') clone.observe(seconds);
      else if (source === 'upload') extract.observe(seconds);
    },
    engineFinished(seconds, totals) {
      engine.observe(seconds);
      files.inc(totals.files);
      bytes.inc(totals.bytes);
      tokens.inc({ encoding: totals.encoding }, totals.tokens);
      cacheLookups.inc({ result: 'hit' }, totals.cache.hits);
      cacheLookups.inc({ result: 'miss' }, totals.cache.misses);
      filesReused.inc(totals.reused);
    },
    scanFinished(state, code = '') {
      finished.inc({ state, code });
    },
  };
}
