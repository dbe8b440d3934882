// Throughput of a queue of independent scans: how many a deployment finishes per minute with one
// and with two worker processes, and how much of the machine they keep busy.
import { existsSync } from 'node:fs';
import { cp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { CORPORA_DIR, treeSize } from './corpora.js';
import type { Corpus } from './corpora.js';
import { cpuSeconds } from './processes.js';
import type { ServiceProcess } from './processes.js';
import { Deployment, scanAndWait, scanStatus, submitScan } from './reposcan-api.js';
import { spread } from './stats.js';
import type { Spread } from './stats.js';
import type { Target } from './report.js';

const run = promisify(execFile);

/** Scans in the measured queue; one more copy warms the workers up. */
export const QUEUED_SCANS = 12;
const TREES = join(CORPORA_DIR, 'throughput');
/** rxjs 7.8.2 (2 277 files, 12 MB): in the quick and the full real corpus alike. */
const SOURCE_FOLDER = 'rxjs-7.8.2';

export interface ThroughputSetup {
  key: string;
  label: string;
  workers: number;
  /** Each worker held to a core of its own (worker i on core i). */
  pinned: boolean;
}

export const SETUPS: readonly ThroughputSetup[] = [
  { key: '1-shared', label: '1 worker, every core', workers: 1, pinned: false },
  { key: '2-shared', label: '2 workers, sharing every core', workers: 2, pinned: false },
  { key: '1-pinned', label: '1 worker on a core of its own', workers: 1, pinned: true },
  { key: '2-pinned', label: '2 workers, each on a core of its own', workers: 2, pinned: true },
];

export interface ThroughputRow {
  key: string;
  label: string;
  /** Scans finished per minute: QUEUED_SCANS ÷ (first submit → last completed_at). */
  scans_per_minute: Spread | null;
  /** Worker processes' CPU (user + system, every thread) per scan, seconds. */
  worker_cpu_s_per_scan: Spread | null;
  /** Worker CPU ÷ wall time: cores the workers kept busy. */
  cores_busy: Spread | null;
  /** One worker only: mean time from one scan's completed_at to the next one's started_at, ms. */
  gap_between_scans_ms: Spread | null;
}

export interface Throughput {
  tree: { files: number; bytes: number };
  cores: number;
  /**
   * What this machine gives two processes of pure computation, each on a core of its own, against
   * one alone (2 × one's time ÷ the slower of two's): the ceiling no two workers can pass here.
   */
  machine_scaling: Spread | null;
  rows: ThroughputRow[];
  /** Why the pinned rows were not measured, if they were not. */
  skipped_pinned: string | null;
}

/**
 * Copies of one package, each file given a line of its own copy number: as many independent
 * repositories as scans, so no scan finds another's counts in the shared token cache.
 */
async function prepareTrees(corpus: Corpus): Promise<string[]> {
  const names = Array.from({ length: QUEUED_SCANS + 1 }, (_, i) => `scan-${String(i).padStart(2, '0')}`);
  const marker = join(TREES, '.complete');
  if (!existsSync(marker)) {
    await rm(TREES, { recursive: true, force: true });
    for (const [n, name] of names.entries()) {
      const root = join(TREES, name);
      await cp(join(corpus.root, SOURCE_FOLDER), root, { recursive: true });
      for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
        if (!entry.isFile()) continue;
        const path = join(entry.parentPath, entry.name);
        await writeFile(path, Buffer.concat([await readFile(path), Buffer.from(`\n// copy ${n}\n`)]));
      }
    }
    await writeFile(marker, '');
  }
  return names.map((name) => join(TREES, name));
}

interface Sample {
  scansPerMinute: number;
  cpuPerScan: number;
  coresBusy: number;
  gapMs: number | null;
}

async function runOnce(setup: ThroughputSetup, trees: string[]): Promise<Sample> {
  const deployment = await Deployment.create({ WORKER_CONCURRENCY: '1', MAX_QUEUED_SCANS: '100' });
  try {
    const { baseUrl } = await deployment.startApi();
    const workers: ServiceProcess[] = [];
    for (let i = 0; i < setup.workers; i++) workers.push(await deployment.startWorker(setup.pinned ? { cpu: i } : {}));
    // Three warm-up scans per worker, so each has its tokenizer threads started and its code
    // compiled before the clock starts (a worker's first scans of a tree run up to twice as long).
    const [warmup, ...queue] = trees as [string, ...string[]];
    await Promise.all(Array.from({ length: 3 * setup.workers }, () => scanAndWait(baseUrl, warmup)));
    const cpuBefore = await Promise.all(workers.map((w) => cpuSeconds(w.pid)));
    const submittedAt = Date.now();
    const ids: string[] = [];
    for (const tree of queue) ids.push(await submitScan(baseUrl, tree));
    // Slow polling: a status read costs the API CPU the workers would otherwise have. The times
    // come from the scans' own records, not from when the poll saw them.
    const spans: Array<[number, number]> = [];
    for (;;) {
      const states = await Promise.all(ids.map((id) => scanStatus(baseUrl, id)));
      const failed = states.find((s) => s.state === 'failed' || s.state === 'cancelled');
      if (failed) throw new Error(`a throughput scan ended ${failed.state}: ${JSON.stringify(failed.error)}`);
      if (states.every((s) => s.state === 'completed')) {
        for (const s of states) spans.push([Date.parse(s.started_at as string), Date.parse(s.completed_at as string)]);
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const cpuAfter = await Promise.all(workers.map((w) => cpuSeconds(w.pid)));
    const cpu = cpuAfter.reduce((sum, v, i) => sum + v - (cpuBefore[i] as number), 0);
    const wallS = (Math.max(...spans.map(([, end]) => end)) - submittedAt) / 1000;
    spans.sort((a, b) => a[0] - b[0]);
    const gaps = spans.slice(1).map(([start], i) => start - (spans[i] as [number, number])[1]);
    return {
      scansPerMinute: (queue.length * 60) / wallS,
      cpuPerScan: cpu / queue.length,
      coresBusy: cpu / wallS,
      gapMs: setup.workers === 1 ? gaps.reduce((a, b) => a + b, 0) / gaps.length : null,
    };
  } finally {
    await deployment.close();
  }
}

/** A loop of integer arithmetic, about a second on a 2.6 GHz core; no memory, no I/O. */
const SPIN = 'let x = 0; for (let i = 0; i < 4e8; i++) x = (x * 31 + i) | 0; if (x === 42) console.log(x);';

async function spinMs(cpu: number): Promise<number> {
  const started = performance.now();
  await run('taskset', ['--cpu-list', String(cpu), process.execPath, '-e', SPIN]);
  return performance.now() - started;
}

async function machineScaling(): Promise<number> {
  const alone = await spinMs(0);
  const together = await Promise.all([spinMs(0), spinMs(1)]);
  return (2 * alone) / Math.max(...together);
}

function pinningUnavailable(): string | null {
  if (availableParallelism() < 2) return 'fewer than 2 cores';
  try {
    execFileSync('taskset', ['--version'], { stdio: 'ignore' });
    return null;
  } catch {
    return '`taskset` (util-linux) not installed';
  }
}

/** Every setup `reps` times, setups in rotation. */
export async function throughput(
  corpus: Corpus,
  reps: number,
  progress: { begin(label: string): void; end(result: string): void },
): Promise<Throughput> {
  const trees = await prepareTrees(corpus);
  const skippedPinned = pinningUnavailable();
  const setups = SETUPS.filter((s) => !s.pinned || skippedPinned === null);
  const samples = new Map<string, Sample[]>(setups.map((s) => [s.key, []]));
  const scaling: number[] = [];
  for (let rep = 0; rep < reps; rep++) {
    if (skippedPinned === null) {
      progress.begin(
        `throughput: pure computation in 1 and 2 processes, the machine's own scaling (repetition ${rep + 1}/${reps})`,
      );
      scaling.push(await machineScaling());
      progress.end(`${(scaling.at(-1) as number).toFixed(2)}×`);
    }
    for (const setup of setups) {
      progress.begin(`throughput: ${setup.label} (repetition ${rep + 1}/${reps})`);
      const sample = await runOnce(setup, trees);
      samples.get(setup.key)?.push(sample);
      progress.end(`${sample.scansPerMinute.toFixed(0)} scans/min, ${sample.coresBusy.toFixed(2)} cores busy`);
    }
  }
  return {
    tree: await treeSize(trees[1] as string),
    cores: availableParallelism(),
    machine_scaling: spread(scaling),
    skipped_pinned: skippedPinned,
    rows: SETUPS.map((setup) => {
      const of = samples.get(setup.key) ?? [];
      return {
        key: setup.key,
        label: setup.label,
        scans_per_minute: spread(of.map((s) => s.scansPerMinute)),
        worker_cpu_s_per_scan: spread(of.map((s) => s.cpuPerScan)),
        cores_busy: spread(of.map((s) => s.coresBusy)),
        gap_between_scans_ms: spread(of.flatMap((s) => (s.gapMs === null ? [] : [s.gapMs]))),
      };
    }),
  };
}

const median = (result: Throughput, key: string): number | null =>
  result.rows.find((r) => r.key === key)?.scans_per_minute?.median ?? null;

/**
 * Two workers each on a core of their own against one: at least this share of the machine's own
 * scaling (the API, Redis and the bench's polling share those cores, about 7 % of them).
 */
export const SCALING_SHARE_LIMIT = 0.9;

export function throughputTargets(result: Throughput): Target[] {
  const one = median(result, '1-pinned');
  const two = median(result, '2-pinned');
  const machine = result.machine_scaling?.median ?? null;
  const ratio = one !== null && two !== null ? two / one : null;
  const share = ratio !== null && machine !== null ? ratio / machine : null;
  return [
    {
      target: `throughput: ${QUEUED_SCANS} independent scans, 2 workers each on a core of its own ÷ 1 worker on one core, against two processes of pure computation ÷ one on this machine`,
      measured:
        share === null
          ? `not measured${result.skipped_pinned ? ` (${result.skipped_pinned})` : ''}`
          : `${ratio?.toFixed(2)}× (${two?.toFixed(0)} ÷ ${one?.toFixed(0)} scans/min) against ${machine?.toFixed(2)}×: ${(share * 100).toFixed(0)} %`,
      value: share,
      limit: `≥ ${SCALING_SHARE_LIMIT * 100} % of the machine's`,
      met: share === null ? null : share >= SCALING_SHARE_LIMIT,
    },
  ];
}

export function renderThroughput(result: Throughput): string[] {
  const show = (s: Spread | null, digits: number): string =>
    s === null ? '—' : `${s.median.toFixed(digits)} (${s.min.toFixed(digits)}–${s.max.toFixed(digits)})`;
  const n = result.rows.find((r) => r.scans_per_minute)?.scans_per_minute?.n ?? 0;
  const lines = [
    `| ${QUEUED_SCANS} independent scans of ${result.tree.files} files, ${(result.tree.bytes / 1e6).toFixed(1)} MB each, ${result.cores} cores (n = ${n}) | scans/min | worker CPU-s per scan | cores busy | idle between scans, ms |`,
    '|---|---|---|---|---|',
    ...result.rows.map(
      (r) =>
        `| ${r.label} | ${show(r.scans_per_minute, 0)} | ${show(r.worker_cpu_s_per_scan, 3)} | ${show(r.cores_busy, 2)} | ${show(r.gap_between_scans_ms, 0)} |`,
    ),
  ];
  if (result.machine_scaling)
    lines.push(
      '',
      `Two processes of pure computation, each on a core of its own, against one alone: ${show(result.machine_scaling, 2)}× (this machine's ceiling for two workers).`,
    );
  if (result.skipped_pinned) lines.push('', `Pinned rows not measured: ${result.skipped_pinned}.`);
  lines.push('');
  return lines;
}
