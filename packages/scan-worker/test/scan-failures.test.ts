import { randomUUID } from 'node:crypto';
import { cp, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import type { ScanRequestRecord, ScanStateRecord } from '@reposcan/contracts';
import { ScanOptions } from '@reposcan/contracts';
import { createEngine, createTokenPool } from '@reposcan/core';
import type { TokenPool } from '@reposcan/core';
import { loadConfig } from '@reposcan/config';
import { createMemoryTransport } from '@reposcan/queue';
import type { QueueTransport } from '@reposcan/queue';
import { engineLimitsFromConfig } from '@reposcan/runtime';
import { sourceSettingsFromConfig } from '@reposcan/sources';
import { stateRecord, tempStore } from '../../../packages/storage/test/temp-store.js';
import type { TempStore } from '../../../packages/storage/test/temp-store.js';
import { createScanProcessor } from '../src/scan-processor.js';
import { TokenCaches } from '../src/token-caches.js';
import type { ScanEngine } from '../src/scan-attempt.js';
import { createScanMetrics } from '../src/worker-metrics.js';

const SAMPLE_REPO = fileURLToPath(new URL('../../../packages/core/test/fixtures/sample-repo', import.meta.url));

/** A real engine whose counting goes through `count`, around a real pool counting in this thread. */
function injectedEngine(count: (real: TokenPool, contents: readonly Uint8Array[]) => Promise<number[]>): ScanEngine {
  const engine = createEngine({ tokenThreads: 0 });
  const real = createTokenPool({ encoding: 'o200k_base', threads: 0 });
  cleanups.push(() => engine.close());
  const pool: TokenPool = {
    encoding: real.encoding,
    threads: 0,
    warm: () => real.warm(),
    close: () => real.close(),
    count: (contents) => count(real, contents),
  };
  return { ...engine, tokenPool: () => pool };
}

interface LogLine {
  level: number;
  msg: string;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A real local scan on the memory transport (3 attempts, fast backoff), with counting as `engine` does it. */
async function runScanJob(
  engine: ScanEngine,
): Promise<{ state: ScanStateRecord | null; attempts: number[]; logs: LogLine[]; temp: TempStore }> {
  const temp = await tempStore();
  const transport: QueueTransport = createMemoryTransport({ maxWaiting: 10, attempts: 3, backoffMs: 20 });
  cleanups.push(
    () => temp.cleanup(),
    () => transport.close(),
  );
  const repos = join(temp.sandbox, 'repos');
  await mkdir(repos);
  await cp(SAMPLE_REPO, join(repos, 'sample'), { recursive: true });
  const config = loadConfig({ DATA_DIR: temp.dataDir, ALLOWED_LOCAL_ROOTS: repos });
  const logs: LogLine[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => logs.push(JSON.parse(line) as LogLine) });

  const processor = createScanProcessor({
    store: temp.store,
    sources: sourceSettingsFromConfig(config),
    limits: engineLimitsFromConfig(config),
    scanTimeoutMs: 60_000,
    engine,
    tokenCaches: new TokenCaches(temp.store, 0, log),
    log,
    metrics: createScanMetrics(new Registry()),
  });
  const attempts: number[] = [];
  let settled = (): void => {};
  const finished = new Promise<void>((resolve) => (settled = resolve));
  transport.startWorker({
    concurrency: 1,
    processor: async (job) => {
      attempts.push(job.attempt);
      await processor(job);
      settled();
    },
    onFinalFailure: () => {
      settled();
      return Promise.resolve();
    },
  });

  const scanId = randomUUID();
  const request: ScanRequestRecord = {
    version: 1,
    scan_id: scanId,
    source: { type: 'local', repo_path: join(repos, 'sample') },
    options: ScanOptions.parse({}),
    encoding: 'o200k_base',
    created_at: new Date().toISOString(),
  };
  await temp.store.create(scanId, request, stateRecord(scanId, { source: { type: 'local', url: null } }));
  await transport.queue.enqueue(scanId);
  await finished;
  return { state: await temp.store.readState(scanId), attempts, logs, temp };
}

function overflow(depth: number): number {
  return overflow(depth + 1) + 1;
}

describe('a scan that hits a bug', () => {
  it.each([
    ['a TypeError', (): Promise<number[]> => Promise.resolve((undefined as unknown as number[]).map((n) => n))],
    ['a stack overflow (RangeError)', (): Promise<number[]> => Promise.resolve([overflow(0)])],
  ])('fails at once with INTERNAL_ERROR on %s, not after three attempts', async (_name, bug) => {
    const { state, attempts, logs, temp } = await runScanJob(injectedEngine(() => bug()));
    expect(attempts).toEqual([1]);
    expect(state).toMatchObject({ state: 'failed', attempt: 1, error: { code: 'INTERNAL_ERROR' } });
    expect(state?.error?.message).toMatch(/not retried/);
    // Logged once, as the error it is; its staging is gone.
    expect(logs.filter((l) => l.level >= 50).map((l) => l.msg)).toEqual(['scan failed unexpectedly']);
    expect(await temp.store.listStaging(state?.scan_id ?? '')).toEqual([]);
  });
});

describe('a scan that meets a transient failure', () => {
  it('runs again and completes on its second attempt', async () => {
    let failures = 0;
    const engine = injectedEngine((real, contents) => {
      if (failures++ === 0)
        return Promise.reject(Object.assign(new Error('EAGAIN: resource temporarily unavailable'), { code: 'EAGAIN' }));
      return real.count(contents);
    });
    const { state, attempts } = await runScanJob(engine);
    expect(attempts).toEqual([1, 2]);
    expect(state).toMatchObject({ state: 'completed', attempt: 2, error: null });
    expect(state?.result?.num_textual_files).toBeGreaterThan(0);
  });
});
