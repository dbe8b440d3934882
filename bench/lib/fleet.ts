// How cost grows with the fleet: thousands of tiny scans queued through one API onto a Redis of
// their own, drained by 50 worker slots, with what each scan costs Redis and how fast the queue
// hands work out.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PrivateRedis } from '../../packages/queue/test/support/private-redis.js';
import { CORPORA_DIR } from './corpora.js';
import { Deployment, scanStatus, submitScan } from './reposcan-api.js';
import type { ScanStatus } from './reposcan-api.js';
import { runWrk } from './wrk.js';
import type { WrkResult } from './wrk.js';

const run = promisify(execFile);

export const FLEET_WORKERS = 5;
export const SLOTS_PER_WORKER = 10;
/** Requests in flight while the queue fills, as many clients submitting at once. */
const SUBMITTERS = 32;
/** Scans submitted one at a time to idle slots, for the time from enqueue to start. */
const HEAD_PROBES = 100;
/** Seconds of a drained deployment with every slot idle, for what idling costs Redis. */
const IDLE_SECONDS = 5;

export interface Fleet {
  scans: number;
  slots: number;
  /** POST /v1/scan?wait=false while the queue fills, ms. */
  enqueue_ms: { p50: number; p99: number; max: number };
  enqueue_per_s: number;
  /** Submit → `started_at` of a scan submitted to idle slots (the head of an empty queue), ms. */
  enqueue_to_start_ms: { p50: number; p99: number };
  drain_per_s: number;
  /** Redis's own figures (INFO), per scan. */
  redis_bytes_per_queued_scan: number;
  /** Memory still held once every scan finished, per finished job Redis keeps (BullMQ keeps the last 1 000). */
  redis_bytes_per_kept_finished_job: number;
  redis_jobs_kept: number;
  redis_commands_per_scan: number;
  redis_cpu_ms_per_scan: number;
  /** The same while queueing alone (the API's side). */
  redis_commands_per_enqueue: number;
  redis_cpu_ms_per_enqueue: number;
  /** What the idle slots (blocking waits, lock and stall checks, announcements, janitors) cost Redis per second. */
  redis_idle_commands_per_s: number;
  redis_idle_cpu_ms_per_s: number;
  /** Per scan, net of that idle cost over the drain: what a scan itself costs Redis. */
  redis_net_cpu_ms_per_scan: number;
  /** wrk on GET /v1/scans/{id} while the queue drains. */
  status_reads: WrkResult;
}

async function redisInfo(port: number): Promise<Map<string, string>> {
  const { stdout } = await run('redis-cli', ['-p', String(port), 'INFO', 'everything']);
  const info = new Map<string, string>();
  for (const line of stdout.split('\n')) {
    const at = line.indexOf(':');
    if (at > 0) info.set(line.slice(0, at), line.slice(at + 1).trim());
  }
  return info;
}

interface RedisFigures {
  memory: number;
  commands: number;
  cpuMs: number;
}

async function redisFigures(port: number): Promise<RedisFigures> {
  const info = await redisInfo(port);
  const n = (key: string) => Number(info.get(key) ?? Number.NaN);
  return {
    memory: n('used_memory'),
    commands: n('total_commands_processed'),
    cpuMs: (n('used_cpu_user') + n('used_cpu_sys')) * 1000,
  };
}

async function jobsKept(port: number, prefix: string): Promise<number> {
  const { stdout } = await run('redis-cli', ['-p', String(port), 'ZCARD', `${prefix}:scans:completed`]);
  return Number(stdout.trim());
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

/** Runs `task` over `items` with `limit` in flight. */
async function pool<T, R>(items: readonly T[], limit: number, task: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await task(items[i] as T);
      }
    }),
  );
  return out;
}

export async function fleet(
  scans: number,
  wrkSeconds: number,
  progress: { begin(label: string): void; end(result: string): void },
): Promise<Fleet> {
  const tiny = join(CORPORA_DIR, 'fleet-tiny');
  await mkdir(tiny, { recursive: true });
  await writeFile(join(tiny, 'main.ts'), 'export const answer = (x: number): number => x * 2;\n');
  const redis = await PrivateRedis.start();
  // The volume's fsyncs are not what this measures: a tmpfs where the machine has one.
  const dataDir = existsSync('/dev/shm') ? await mkdtemp('/dev/shm/reposcan-bench-fleet-') : null;
  const deployment = await Deployment.create({
    REDIS_URL: redis.url,
    MAX_QUEUED_SCANS: String(scans + HEAD_PROBES + 100),
    WORKER_CONCURRENCY: String(SLOTS_PER_WORKER),
    ...(dataDir ? { DATA_DIR: dataDir } : {}),
  });
  const prefix = deployment.env.QUEUE_PREFIX as string;
  try {
    const { baseUrl } = await deployment.startApi();

    progress.begin(`fleet: ${scans} tiny scans queued by ${SUBMITTERS} clients at once, no worker running`);
    const before = await redisFigures(redis.port);
    const latencies: number[] = [];
    const fillStarted = performance.now();
    const ids = await pool(
      Array.from({ length: scans }, (_, i) => i),
      SUBMITTERS,
      async () => {
        const started = performance.now();
        const id = await submitScan(baseUrl, tiny);
        latencies.push(performance.now() - started);
        return id;
      },
    );
    const fillSeconds = (performance.now() - fillStarted) / 1000;
    const queued = await redisFigures(redis.port);
    latencies.sort((a, b) => a - b);
    progress.end(`${(scans / fillSeconds).toFixed(0)} scans/s, p99 ${percentile(latencies, 99).toFixed(1)} ms`);

    progress.begin(`fleet: ${FLEET_WORKERS} workers × ${SLOTS_PER_WORKER} slots drain the queue; wrk reads a status`);
    await Promise.all(Array.from({ length: FLEET_WORKERS }, () => deployment.startWorker()));
    const drainStartedAt = performance.now();
    const statusReads = await runWrk(`${baseUrl}/v1/scans/${ids[ids.length - 1] as string}`, wrkSeconds);
    let last: ScanStatus;
    do {
      await new Promise((resolve) => setTimeout(resolve, 500));
      last = await scanStatus(baseUrl, ids[ids.length - 1] as string);
    } while (last.state === 'queued' || last.state === 'running');
    const records = await pool(ids, SUBMITTERS, (id) => scanStatus(baseUrl, id));
    const notCompleted = records.filter((r) => r.state !== 'completed');
    if (notCompleted.length > 0)
      throw new Error(`${notCompleted.length} fleet scans did not complete: ${JSON.stringify(notCompleted[0])}`);
    const firstStart = Math.min(...records.map((r) => Date.parse(r.started_at as string)));
    const lastEnd = Math.max(...records.map((r) => Date.parse(r.completed_at as string)));
    const drained = await redisFigures(redis.port);
    const drainEndedAt = performance.now();
    const kept = await jobsKept(redis.port, prefix);
    const drainPerS = scans / ((lastEnd - firstStart) / 1000);
    progress.end(`${drainPerS.toFixed(0)} scans/s; ${statusReads.requests_per_sec.toFixed(0)} status reads/s`);

    progress.begin(`fleet: ${HEAD_PROBES} scans submitted one by one to idle slots`);
    const toStart: number[] = [];
    for (let i = 0; i < HEAD_PROBES; i++) {
      const submitted = Date.now();
      const id = await submitScan(baseUrl, tiny);
      let status: ScanStatus;
      for (;;) {
        status = await scanStatus(baseUrl, id);
        if (status.started_at !== null) break;
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
      toStart.push(Date.parse(status.started_at) - submitted);
    }
    toStart.sort((a, b) => a - b);
    const idleFrom = await redisFigures(redis.port);
    const idleStarted = performance.now();
    await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000));
    const idleTo = await redisFigures(redis.port);
    const idleSeconds = (performance.now() - idleStarted) / 1000;
    const idleCpuPerS = (idleTo.cpuMs - idleFrom.cpuMs) / idleSeconds;
    progress.end(`p50 ${percentile(toStart, 50)} ms, p99 ${percentile(toStart, 99)} ms`);

    return {
      scans,
      slots: FLEET_WORKERS * SLOTS_PER_WORKER,
      enqueue_ms: {
        p50: percentile(latencies, 50),
        p99: percentile(latencies, 99),
        max: latencies[latencies.length - 1] as number,
      },
      enqueue_per_s: scans / fillSeconds,
      enqueue_to_start_ms: { p50: percentile(toStart, 50), p99: percentile(toStart, 99) },
      drain_per_s: drainPerS,
      redis_bytes_per_queued_scan: (queued.memory - before.memory) / scans,
      redis_bytes_per_kept_finished_job: (drained.memory - before.memory) / Math.max(1, kept),
      redis_jobs_kept: kept,
      redis_commands_per_scan: (drained.commands - before.commands) / scans,
      redis_cpu_ms_per_scan: (drained.cpuMs - before.cpuMs) / scans,
      redis_commands_per_enqueue: (queued.commands - before.commands) / scans,
      redis_cpu_ms_per_enqueue: (queued.cpuMs - before.cpuMs) / scans,
      redis_idle_commands_per_s: (idleTo.commands - idleFrom.commands) / idleSeconds,
      redis_idle_cpu_ms_per_s: idleCpuPerS,
      redis_net_cpu_ms_per_scan:
        (drained.cpuMs - before.cpuMs - idleCpuPerS * ((drainEndedAt - drainStartedAt) / 1000)) / scans,
      status_reads: statusReads,
    };
  } finally {
    await deployment.close().catch(() => undefined);
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
    await redis.down();
  }
}

export function renderFleet(result: Fleet): string[] {
  const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} kB`;
  return [
    `| fleet: ${result.scans} tiny scans (one file each, the real engine), one API, ${FLEET_WORKERS} workers × ${SLOTS_PER_WORKER} slots, one Redis of its own, volume on tmpfs | |`,
    '|---|---|',
    `| enqueue (POST /v1/scan?wait=false, ${SUBMITTERS} clients at once) | ${result.enqueue_per_s.toFixed(0)} scans/s, p50 ${result.enqueue_ms.p50.toFixed(1)} ms, p99 ${result.enqueue_ms.p99.toFixed(1)} ms, max ${result.enqueue_ms.max.toFixed(0)} ms |`,
    `| enqueue → start, a scan at the head of an empty queue with idle slots (${HEAD_PROBES} one by one) | p50 ${result.enqueue_to_start_ms.p50} ms, p99 ${result.enqueue_to_start_ms.p99} ms |`,
    `| drain, ${result.slots} slots | ${result.drain_per_s.toFixed(0)} scans/s |`,
    `| Redis memory per queued scan | ${kb(result.redis_bytes_per_queued_scan)} |`,
    `| Redis memory per finished job kept (BullMQ keeps the last 1 000, for a day) | ${kb(result.redis_bytes_per_kept_finished_job)} (${result.redis_jobs_kept} kept) |`,
    `| Redis commands per scan (submit to finish, everything included) | ${result.redis_commands_per_scan.toFixed(0)} |`,
    `| Redis CPU per scan (everything included) | ${result.redis_cpu_ms_per_scan.toFixed(2)} ms |`,
    `| of which queueing (the API's submit) | ${result.redis_commands_per_enqueue.toFixed(0)} commands, ${result.redis_cpu_ms_per_enqueue.toFixed(2)} ms |`,
    `| ${result.slots} idle slots, per second (blocking waits, lock and stall checks, announcements, janitors) | ${result.redis_idle_commands_per_s.toFixed(0)} commands, ${result.redis_idle_cpu_ms_per_s.toFixed(1)} ms of Redis CPU |`,
    `| Redis CPU per scan, net of idling over the drain | ${result.redis_net_cpu_ms_per_scan.toFixed(2)} ms |`,
    `| GET /v1/scans/{id} while the queue drains (wrk ${result.status_reads.seconds} s, ${result.status_reads.connections} connections) | ${result.status_reads.requests_per_sec.toFixed(0)} reads/s, p99 ${result.status_reads.latency_ms.p99.toFixed(1)} ms |`,
    '',
  ];
}
