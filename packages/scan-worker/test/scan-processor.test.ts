import { createHash, randomUUID } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { ScanError, ScanOptions } from '@reposcan/contracts';
import type { ScanRequestRecord, ScanStateRecord } from '@reposcan/contracts';
import type { ScanReport, TokenPool } from '@reposcan/core';
import { createMemoryCredentialVault } from '@reposcan/queue';
import type { ScanJobContext } from '@reposcan/queue';
import type { PreparedSource } from '@reposcan/sources';
import { stateRecord, tempStore } from '../../../packages/storage/test/temp-store.js';
import type { TempStore } from '../../../packages/storage/test/temp-store.js';
import { buildSummaryRecord } from '../src/build-records.js';
import { createScanProcessor } from '../src/scan-processor.js';
import type { ScanProcessorDeps } from '../src/scan-processor.js';
import type { ScanEngine } from '../src/scan-attempt.js';
import { TokenCaches } from '../src/token-caches.js';
import { createScanMetrics } from '../src/worker-metrics.js';

// The scan processor's steps against a real store in a temporary folder, with the source
// preparation and the engine replaced: no Redis, no git, no tokenizer threads.

/** The engine's runScan, every argument given. */
type RunScan = (...args: Required<Parameters<ScanEngine['runScan']>>) => ReturnType<ScanEngine['runScan']>;
type PrepareSource = NonNullable<ScanProcessorDeps['prepareSource']>;

interface LogLine {
  level: number;
  msg: string;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A token pool that must not be asked to count: the engines here count nothing. */
const IDLE_POOL: TokenPool = {
  encoding: 'o200k_base',
  threads: 0,
  warm: () => Promise.resolve(),
  close: () => Promise.resolve(),
  count: () => Promise.reject(new Error('this engine counts nothing')),
};

interface Scan {
  temp: TempStore;
  scanId: string;
  request: ScanRequestRecord;
  registry: Registry;
  logs: LogLine[];
  /** Calls of the injected source preparation and engine. */
  calls: { prepare: number; engine: number };
  processor(job: Partial<ScanJobContext>, deps?: Partial<ScanProcessorDeps>): Promise<void>;
  state(): Promise<ScanStateRecord | null>;
}

/** A local-path scan accepted on a fresh volume (queued), and a processor for it with `prepare` and `engine` injected. */
async function acceptedScan(
  engine: RunScan,
  prepare: PrepareSource = prepareSample,
  source: ScanRequestRecord['source'] = { type: 'local', repo_path: '/repos/sample' },
): Promise<Scan> {
  const temp = await tempStore();
  cleanups.push(() => temp.cleanup());
  const scanId = randomUUID();
  const request: ScanRequestRecord = {
    version: 1,
    scan_id: scanId,
    source,
    options: ScanOptions.parse({}),
    encoding: 'o200k_base',
    created_at: new Date().toISOString(),
  };
  await temp.store.create(scanId, request, stateRecord(scanId, { source: { type: 'local', url: null } }));
  const registry = new Registry();
  const metrics = createScanMetrics(registry);
  const logs: LogLine[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => logs.push(JSON.parse(line) as LogLine) });
  const calls = { prepare: 0, engine: 0 };
  return {
    temp,
    scanId,
    request,
    registry,
    logs,
    calls,
    processor: (job, deps = {}) =>
      createScanProcessor({
        store: temp.store,
        sources: {
          allowedLocalRoots: null,
          allowedHosts: [],
          allowHttp: false,
          allowPrivateHosts: false,
          cloneTimeoutMs: 1000,
          cloneStallSeconds: 1,
          maxCloneBytes: 1,
          maxBlobBytes: 1,
          gitCredentialsFile: null,
          archive: {
            maxEntries: 1,
            maxUncompressedBytes: 1,
            maxRatio: 1,
            maxDepth: 1,
            maxNameBytes: 1,
            maxComponentBytes: 1,
          },
        },
        limits: { maxFiles: 100, maxDepth: 10, maxFileBytes: 1 << 20, walkTimeoutMs: 10_000 },
        scanTimeoutMs: 60_000,
        engine: {
          tokenPool: () => IDLE_POOL,
          prepareWalk: () => {},
          runScan: (input, engineDeps = {}, onProgress = () => {}) => {
            calls.engine++;
            return engine(input, engineDeps, onProgress);
          },
        },
        tokenCaches: new TokenCaches(temp.store, 0, log),
        log,
        metrics,
        cancelPollMs: 10,
        prepareSource: (source, ctx) => {
          calls.prepare++;
          return prepare(source, ctx);
        },
        ...deps,
      })({ scanId, attempt: 1, failedAttempts: 0, maxAttempts: 3, signal: new AbortController().signal, ...job }),
    state: () => temp.store.readState(scanId),
  };
}

const prepareSample: PrepareSource = (source) =>
  Promise.resolve<PreparedSource>({
    root: source.type === 'local' ? source.repo_path : '/nowhere',
    repoName: 'sample',
    source: { type: 'local', url: null, hostFamily: null, ref: null, branch: 'main', commit: null, subdir: null },
  });

/** Writes `output.txt` with one line per file into the engine's output folder and reports it as the engine would. */
async function writeOutput(outDir: string, paths: string[], repoName = 'sample'): Promise<ScanReport> {
  const text = paths.map((p) => `${p}\n`).join('');
  await writeFile(join(outDir, 'output.txt'), text);
  const bytes = Buffer.byteLength(text);
  return {
    repository: { name: repoName, source: 'local', url: null, branch: 'main', commit: null, subdir: null },
    options: ScanOptions.parse({}),
    encoding: 'o200k_base',
    summary: {
      total_files: paths.length,
      total_size: bytes,
      tokens: 2 * paths.length,
      estimated_tokens: 2 * paths.length,
      file_type_breakdown: { code: paths.length },
      tokens_by_type: { code: 2 * paths.length },
      files_with_replacements: 0,
      formatted: {
        total_size: `${bytes} B`,
        tokens: String(2 * paths.length),
        estimated_tokens: String(2 * paths.length),
      },
    },
    tree: null,
    files: paths.map((path) => ({
      path,
      subcategory: 'code',
      size_bytes: path.length + 1,
      tokens: 2,
      tokens_estimate: 2,
      url: '',
    })),
    assets: [],
    skipped: [],
    artifacts: [{ format: 'txt', file: 'output.txt', bytes, sha256: createHash('sha256').update(text).digest('hex') }],
    timings: { walk_ms: 1, read_ms: 1, render_ms: 1, zip_ms: 0, total_ms: 3 },
  };
}

/** An engine that walks, reads and renders `paths` and writes them out. */
function engineOf(paths: string[]): RunScan {
  return async (input, _deps, onProgress = () => {}) => {
    onProgress({ phase: 'walk', files_done: 0, files_total: 0 });
    onProgress({ phase: 'read', files_done: paths.length, files_total: paths.length });
    onProgress({ phase: 'render', files_done: paths.length, files_total: paths.length });
    return writeOutput(input.outDir, paths);
  };
}

/** An engine that fails with `error`. */
function failingEngine(error: () => Error): RunScan {
  return () => Promise.reject(error());
}

/** Resolves once `signal` aborts: an engine that runs until it is stopped. */
function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) =>
    signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true }),
  );
}

/** Publishes, as another attempt of the same scan would, a result listing `paths`. */
async function publishAsAnotherAttempt(scan: Scan, paths: string[]): Promise<void> {
  const staging = await scan.temp.store.createStaging(scan.scanId, 99);
  const report = await writeOutput(staging.outDir, paths);
  const summary = buildSummaryRecord(scan.scanId, report, scan.request.created_at, new Date().toISOString());
  await writeFile(join(staging.outDir, 'summary.json'), `${JSON.stringify(summary)}\n`);
  expect(await scan.temp.store.publish(scan.scanId, staging.outDir)).toBe('published');
  await scan.temp.store.removeStaging(staging.dir);
}

/** Attempt outcomes recorded on the worker's metrics, as /metrics shows them (zeros left out). */
async function attemptOutcomes(registry: Registry): Promise<Record<string, number>> {
  const metric = await registry.getSingleMetric('reposcan_scan_attempts_total')?.get();
  return Object.fromEntries(
    (metric?.values ?? []).filter((v) => v.value > 0).map((v) => [String(v.labels.outcome), v.value]),
  );
}

async function rejection(run: Promise<unknown>): Promise<unknown> {
  return run.then(
    () => expect.unreachable('the attempt should have rejected'),
    (error: unknown) => error,
  );
}

const transient = (): Error => Object.assign(new Error('EAGAIN: resource temporarily unavailable'), { code: 'EAGAIN' });

describe('a scan attempt that completes', () => {
  it('publishes the artifacts and records the completed state with its result', async () => {
    const scan = await acceptedScan(engineOf(['src/a.ts', 'README.md']));
    await scan.processor({ attempt: 1 });

    const state = await scan.state();
    expect(state).toMatchObject({
      state: 'completed',
      attempt: 1,
      error: null,
      progress: { phase: 'done', files_done: 2, files_total: 2 },
    });
    expect(state?.started_at).not.toBeNull();
    const summary = JSON.parse(await readFile(scan.temp.store.resultFile(scan.scanId, 'summary.json'), 'utf8')) as {
      completed_at: string;
    };
    expect(state?.completed_at).toBe(summary.completed_at);
    const text = await readFile(scan.temp.store.resultFile(scan.scanId, 'output.txt'), 'utf8');
    expect(text).toBe('src/a.ts\nREADME.md\n');
    expect(state?.result).toMatchObject({
      scan_id: scan.scanId,
      repo_name: 'sample',
      branch: 'main',
      source: { type: 'local', url: null },
      num_textual_files: 2,
      num_non_textual_files: 0,
      skipped_count: 0,
      artifacts: {
        txt: {
          url: `/v1/download/${scan.scanId}?format=txt`,
          bytes: Buffer.byteLength(text),
          sha256: createHash('sha256').update(text).digest('hex'),
        },
      },
    });
    expect(await scan.temp.store.listStaging(scan.scanId)).toEqual([]);
    expect(await attemptOutcomes(scan.registry)).toEqual({ completed: 1 });
    expect(scan.logs.map((l) => l.msg)).toContain('scan completed');
  });

  it('takes the result another attempt published while it ran, and discards its own', async () => {
    const scan: Scan = await acceptedScan(async (input, deps, onProgress) => {
      await publishAsAnotherAttempt(scan, ['one.ts', 'two.ts', 'three.ts']);
      return engineOf(['one.ts'])(input, deps, onProgress);
    });
    await scan.processor({ attempt: 2 });

    const state = await scan.state();
    expect(state).toMatchObject({
      state: 'completed',
      attempt: 2,
      result: { num_textual_files: 3 },
      progress: { files_done: 3 },
    });
    expect(await readFile(scan.temp.store.resultFile(scan.scanId, 'output.txt'), 'utf8')).toBe(
      'one.ts\ntwo.ts\nthree.ts\n',
    );
    expect(scan.logs.map((l) => l.msg)).toContain('another attempt published first; this one is discarded');
    expect(await scan.temp.store.listStaging(scan.scanId)).toEqual([]);
  });

  it('finds a result an earlier attempt published before it stopped, and only records the state', async () => {
    const scan = await acceptedScan(engineOf(['mine.ts']));
    await scan.temp.store.updateState(scan.scanId, (s) => ({ ...s, state: 'running', attempt: 1 }));
    await publishAsAnotherAttempt(scan, ['theirs.ts', 'also-theirs.ts']);
    await scan.processor({ attempt: 1 });

    expect(await scan.state()).toMatchObject({ state: 'completed', error: null, result: { num_textual_files: 2 } });
    expect(scan.calls).toEqual({ prepare: 0, engine: 0 });
    expect(await scan.temp.store.listStaging(scan.scanId)).toEqual([]);
  });
});

describe('a scan attempt with nothing to do', () => {
  it('leaves a deleted scan alone', async () => {
    const scan = await acceptedScan(engineOf(['a.ts']));
    expect(await scan.temp.store.remove(scan.scanId)).toBe(true);
    await scan.processor({});

    expect(await scan.state()).toBeNull();
    expect(scan.calls).toEqual({ prepare: 0, engine: 0 });
    expect(await scan.temp.store.listStaging(scan.scanId)).toEqual([]);
  });

  it('leaves a scan that already ended alone', async () => {
    const scan = await acceptedScan(engineOf(['a.ts']));
    await scan.temp.store.updateState(scan.scanId, (s) => ({
      ...s,
      state: 'cancelled',
      completed_at: new Date().toISOString(),
    }));
    const before = await scan.state();
    await scan.processor({ attempt: 2 });

    expect(await scan.state()).toEqual(before);
    expect(scan.calls).toEqual({ prepare: 0, engine: 0 });
    expect(await scan.temp.store.listStaging(scan.scanId)).toEqual([]);
  });
});

describe('a scan attempt that is stopped', () => {
  it('on a cancel request: removes its staging, records cancelled and resolves', async () => {
    let stagingSeen = 0;
    const scan: Scan = await acceptedScan(async (input) => {
      const { temp, scanId } = scan;
      await writeFile(join(input.outDir, 'output.txt'), 'half');
      stagingSeen = (await temp.store.listStaging(scanId)).length;
      await temp.store.requestCancel(scanId);
      await aborted(input.signal as AbortSignal);
      throw (input.signal as AbortSignal).reason;
    });
    await scan.processor({ attempt: 1 });

    expect(stagingSeen).toBe(1);
    const state = await scan.state();
    expect(state).toMatchObject({ state: 'cancelled', result: null });
    expect(state?.completed_at).not.toBeNull();
    expect(await scan.temp.store.listStaging(scan.scanId)).toEqual([]);
    expect(await attemptOutcomes(scan.registry)).toEqual({ cancelled: 1 });
  });

  it('on shutdown: hands the job back without using an attempt up, and removes its staging', async () => {
    const shutdown = new AbortController();
    const scan = await acceptedScan(async (input) => {
      shutdown.abort(new DOMException('The worker is shutting down; the job goes back to the queue.', 'AbortError'));
      await aborted(input.signal as AbortSignal);
      throw (input.signal as AbortSignal).reason;
    });
    const error = await rejection(scan.processor({ attempt: 1, signal: shutdown.signal }));

    expect(error).toBeInstanceOf(ScanError);
    expect(error).toMatchObject({
      code: 'INTERNAL_ERROR',
      retryable: true,
      message: 'The worker stopped during the scan; it will run again.',
    });
    // Today the state is left as the attempt wrote it (running) until the next attempt begins.
    expect(await scan.state()).toMatchObject({ state: 'running', attempt: 1, error: null });
    expect(await scan.temp.store.listStaging(scan.scanId)).toEqual([]);
    expect(await attemptOutcomes(scan.registry)).toEqual({ handed_back: 1 });
  });
});

describe('a scan attempt that fails', () => {
  it('with attempts left and a transient fault: queued again, and the fault rethrown for the queue to retry', async () => {
    const fault = transient();
    const scan = await acceptedScan(failingEngine(() => fault));
    const error = await rejection(scan.processor({ attempt: 1, maxAttempts: 3 }));

    expect(error).toBe(fault);
    expect(await scan.state()).toMatchObject({
      state: 'queued',
      attempt: 1,
      error: null,
      completed_at: null,
      progress: { phase: 'queued', files_done: 0, files_total: 0 },
    });
    expect(await scan.temp.store.listStaging(scan.scanId)).toEqual([]);
    expect(await attemptOutcomes(scan.registry)).toEqual({ retry: 1 });
  });

  it('after a crashed run, with a failed attempt left: queued again, its state showing the run it was', async () => {
    const fault = transient();
    const scan = await acceptedScan(failingEngine(() => fault));
    const error = await rejection(scan.processor({ attempt: 2, failedAttempts: 0, maxAttempts: 2 }));

    expect(error).toBe(fault);
    expect(await scan.state()).toMatchObject({ state: 'queued', attempt: 2, error: null });
  });

  it('at its last attempt: failed with a code and a sentence, and not retried', async () => {
    const scan = await acceptedScan(failingEngine(transient));
    const error = await rejection(scan.processor({ attempt: 3, failedAttempts: 2, maxAttempts: 3 }));

    expect(error).toMatchObject({ name: 'ScanError', code: 'INTERNAL_ERROR', retryable: false });
    const state = await scan.state();
    expect(state).toMatchObject({ state: 'failed', attempt: 3, error: { code: 'INTERNAL_ERROR' }, result: null });
    expect(state?.error?.message).toMatch(/temporary fault .* at every attempt/);
    expect(state?.completed_at).not.toBeNull();
    expect(await scan.temp.store.listStaging(scan.scanId)).toEqual([]);
    expect(await attemptOutcomes(scan.registry)).toEqual({ failed: 1 });
  });

  it("on a refusal no attempt can change: failed at once with the refusal's code, the engine never run", async () => {
    const refusal = new ScanError('LOCAL_PATH_NOT_FOUND', 'The folder does not exist. Check the path.');
    const scan = await acceptedScan(engineOf(['a.ts']), () => Promise.reject(refusal));
    const error = await rejection(scan.processor({ attempt: 1, maxAttempts: 3 }));

    expect(error).toMatchObject({ code: 'LOCAL_PATH_NOT_FOUND', retryable: false });
    expect(await scan.state()).toMatchObject({
      state: 'failed',
      error: { code: 'LOCAL_PATH_NOT_FOUND', message: 'The folder does not exist. Check the path.' },
    });
    expect(scan.calls).toEqual({ prepare: 1, engine: 0 });
    expect(await scan.temp.store.listStaging(scan.scanId)).toEqual([]);
    expect(scan.logs.find((l) => l.msg === 'scan failed')).toMatchObject({ code: 'LOCAL_PATH_NOT_FOUND' });
  });
});

describe('a scan whose request carried a git token', () => {
  const remote: ScanRequestRecord['source'] = {
    type: 'remote',
    repo_path: 'https://git.example.com/acme/private',
    branch: null,
    credential: 'request',
  };

  it('hands the token to the clone, then deletes it from the vault before the engine runs', async () => {
    const vault = createMemoryCredentialVault();
    const seen: Array<string | null | undefined> = [];
    const scan: Scan = await acceptedScan(
      async (input, deps, onProgress) => {
        seen.push(await vault.get(scan.scanId));
        return engineOf(['a.ts'])(input, deps, onProgress);
      },
      (source, ctx) => {
        seen.push(ctx.gitToken);
        return prepareSample(source, ctx);
      },
      remote,
    );
    await vault.put(scan.scanId, 'me:s3cret', 60_000);
    await scan.processor({ attempt: 1 }, { credentials: vault });
    expect(seen).toEqual(['me:s3cret', null]);
    expect(await scan.state()).toMatchObject({ state: 'completed' });
  });

  it('a token that has expired (or an earlier attempt used up): REPO_AUTH_FAILED saying to submit again, no clone tried', async () => {
    const scan = await acceptedScan(engineOf(['a.ts']), prepareSample, remote);
    const error = await rejection(scan.processor({ attempt: 2 }, { credentials: createMemoryCredentialVault() }));
    expect(error).toMatchObject({ code: 'REPO_AUTH_FAILED', retryable: false });
    const state = await scan.state();
    expect(state).toMatchObject({ state: 'failed', error: { code: 'REPO_AUTH_FAILED' } });
    expect(state?.error?.message).toMatch(/has expired .* submit the scan again/);
    expect(scan.calls).toEqual({ prepare: 0, engine: 0 });
  });

  it('a final failure of the clone deletes the token; a retryable one keeps it for the next attempt', async () => {
    const vault = createMemoryCredentialVault();
    const scan = await acceptedScan(engineOf(['a.ts']), () => Promise.reject(transient()), remote);
    await vault.put(scan.scanId, 'tok', 60_000);
    await rejection(scan.processor({ attempt: 1, failedAttempts: 0, maxAttempts: 2 }, { credentials: vault }));
    expect(await vault.get(scan.scanId)).toBe('tok');
    await rejection(scan.processor({ attempt: 2, failedAttempts: 1, maxAttempts: 2 }, { credentials: vault }));
    expect(await scan.state()).toMatchObject({ state: 'failed' });
    expect(await vault.get(scan.scanId)).toBeNull();
  });
});

describe('a remote scan whose ref the API resolved when it accepted it', () => {
  const resolved = { branch: 'release/2.0', commit: 'c'.repeat(40), subdir: 'docs' };
  const remote: ScanRequestRecord['source'] = {
    type: 'remote',
    repo_path: 'https://git.example.com/acme/app',
    branch: null,
    resolved,
  };

  /** What the clone was given as the resolved ref, when the attempt runs `afterMs` after acceptance. */
  async function refGivenToClone(afterMs: number): Promise<unknown> {
    let given: unknown = 'not asked';
    const scan = await acceptedScan(
      engineOf(['a.ts']),
      (source, ctx) => {
        given = ctx.resolvedRef;
        return prepareSample(source, ctx);
      },
      remote,
    );
    const accepted = Date.parse(scan.request.created_at);
    await scan.processor({}, { now: () => new Date(accepted + afterMs) });
    expect(await scan.state()).toMatchObject({ state: 'completed' });
    return given;
  }

  it('clones that ref as it is when it starts soon after', async () => {
    expect(await refGivenToClone(5_000)).toEqual(resolved);
  });

  it('lists the remote again when it waited in the queue for more than a minute', async () => {
    expect(await refGivenToClone(61_000)).toBeUndefined();
  });
});
