// One measured run of each kind. Each returns samples; cold/warm pairs run back to back on the
// same cache location, everything else starts from nothing of its own.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BenchDeps } from './bench-deps.js';
import { BENCH_DIR, CORPORA_DIR } from './corpora.js';
import type { Corpus } from './corpora.js';
import { readVmHwmKb, resetVmHwm, runMeasured } from './processes.js';
import { Deployment, IMAGE_MALLOC_ENV, inspect, scanAndWait } from './reposcan-api.js';
import type { ScanResult } from './reposcan-api.js';

export interface Sample {
  wallMs: number;
  peakRssMb: number | null;
  files?: number;
  tokens?: number;
  extra?: Record<string, unknown>;
}

const CHILDREN = join(BENCH_DIR, 'children');
/** A tiny tree that warms a fresh worker's tokenizer threads before the measured scan, as a long-lived worker has. */
export const WARMUP_DIR = join(CORPORA_DIR, 'warmup');

export async function writeWarmupTree(): Promise<void> {
  await mkdir(WARMUP_DIR, { recursive: true });
  await writeFile(join(WARMUP_DIR, 'warmup.ts'), 'export const warm = (x: number): number => x * 2;\n');
  await writeFile(join(WARMUP_DIR, 'README.md'), '# warm-up\n\nWarms the token threads of a fresh worker.\n');
}

interface ChildReport {
  ms: number;
  files: number;
  bytes: number;
  tokens?: number;
  timings?: Record<string, number>;
  artifact_bytes?: number;
  threads?: number;
}

function lastJsonLine<T>(stdout: string): T {
  const line = stdout.trim().split('\n').pop() ?? '';
  return JSON.parse(line) as T;
}

/**
 * The engine in a fresh Node process (built code): cold with an empty cache location, then warm with the same one.
 * `options` are scan options by the engine's names, over the API's defaults.
 */
export async function engineRuns(
  corpus: Corpus,
  warm: boolean,
  options: Record<string, unknown> = {},
): Promise<{ cold: Sample; warm?: Sample }> {
  const cacheDir = await mkdtemp(join(tmpdir(), 'reposcan-bench-cache-'));
  const once = async (): Promise<Sample> => {
    const outDir = await mkdtemp(join(tmpdir(), 'reposcan-bench-out-'));
    try {
      const m = await runMeasured(process.execPath, [join(CHILDREN, 'engine-scan.mjs'), corpus.root, outDir], {
        env: { ...IMAGE_MALLOC_ENV, BENCH_TOKEN_CACHE_DIR: cacheDir, BENCH_OPTIONS: JSON.stringify(options) },
      });
      const r = lastJsonLine<ChildReport & { secrets?: unknown; compression?: unknown; cpu_ms?: number }>(m.stdout);
      return {
        wallMs: m.wallMs,
        peakRssMb: m.peakRssMb,
        files: r.files,
        tokens: r.tokens,
        extra: {
          timings: r.timings,
          artifact_bytes: r.artifact_bytes,
          secrets: r.secrets ?? null,
          compression: r.compression ?? null,
          cpu_ms: r.cpu_ms ?? null,
        },
      };
    } finally {
      await rm(outDir, { recursive: true, force: true });
    }
  };
  try {
    const cold = await once();
    return warm ? { cold, warm: await once() } : { cold };
  } finally {
    await rm(cacheDir, { recursive: true, force: true });
  }
}

/** Read floor: every file read once; the time is the child's own (no process start). */
export async function readFloor(corpus: Corpus): Promise<Sample> {
  const m = await runMeasured(process.execPath, [join(CHILDREN, 'read-floor.mjs'), corpus.root]);
  const r = lastJsonLine<ChildReport>(m.stdout);
  return { wallMs: r.ms, peakRssMb: m.peakRssMb, files: r.files, extra: { bytes: r.bytes } };
}

/** Count + write floor: the tokenizer floor while the artifacts' bytes are written; files and bytes are the engine's. */
export async function scanFloor(corpus: Corpus): Promise<Sample> {
  const outDir = await mkdtemp(join(tmpdir(), 'reposcan-bench-out-'));
  try {
    const m = await runMeasured(process.execPath, [join(CHILDREN, 'scan-floor.mjs'), corpus.root, outDir]);
    const r = lastJsonLine<ChildReport & { written_bytes: number }>(m.stdout);
    return {
      wallMs: r.ms,
      peakRssMb: m.peakRssMb,
      files: r.files,
      tokens: r.tokens,
      extra: { bytes: r.bytes, written_bytes: r.written_bytes, threads: r.threads },
    };
  } finally {
    await rm(outDir, { recursive: true, force: true });
  }
}

/** Tokenizer floor: counting only, on every core; files and bytes are the engine's. */
export async function tokenFloor(corpus: Corpus): Promise<Sample> {
  const m = await runMeasured(process.execPath, [join(CHILDREN, 'token-floor.mjs'), corpus.root]);
  const r = lastJsonLine<ChildReport>(m.stdout);
  return {
    wallMs: r.ms,
    peakRssMb: m.peakRssMb,
    files: r.files,
    tokens: r.tokens,
    extra: { bytes: r.bytes, threads: r.threads },
  };
}

export type RepomixStyle = 'plain' | 'json' | 'markdown';

/**
 * repomix on Node 22. Its token cache is `$TMPDIR/repomix/cache/`; a cold run deletes it first, a
 * warm run follows a cold run with the same TMPDIR. Node's compile cache (also under TMPDIR) is
 * left alone, as on a user's machine. `--no-security-check` unless `security` is set.
 * `--no-gitignore`: repomix (globby) also applies the .gitignore files of the enclosing git
 * repository, and this repository ignores bench/corpora/, which would hide every file. The
 * corpora hold no ignore files of their own, so nothing else changes.
 */
export async function repomixRun(
  deps: BenchDeps,
  corpus: Corpus,
  style: RepomixStyle,
  home: string,
  cold: boolean,
  security = false,
  compress = false,
): Promise<Sample> {
  if (cold) await rm(join(home, 'tmp', 'repomix'), { recursive: true, force: true });
  await mkdir(join(home, 'tmp'), { recursive: true });
  await mkdir(join(home, 'cwd'), { recursive: true });
  await mkdir(join(home, 'config'), { recursive: true });
  const out = join(home, `output.${style === 'markdown' ? 'md' : style === 'json' ? 'json' : 'txt'}`);
  const args = [
    deps.repomixCli,
    corpus.root,
    '--style',
    style,
    '-o',
    out,
    '--no-gitignore',
    ...(security ? [] : ['--no-security-check']),
    ...(compress ? ['--compress'] : []),
  ];
  try {
    // An empty working directory and config home: no repomix.config.json or global config is picked up.
    const m = await runMeasured(deps.node22, args, {
      cwd: join(home, 'cwd'),
      env: { TMPDIR: join(home, 'tmp'), XDG_CONFIG_HOME: join(home, 'config'), NO_COLOR: '1', FORCE_COLOR: '0' },
    });
    const number = (label: string): number | undefined => {
      const match = new RegExp(`${label}:\\s+([\\d,]+)`).exec(m.stdout);
      return match ? Number((match[1] as string).replaceAll(',', '')) : undefined;
    };
    return { wallMs: m.wallMs, peakRssMb: m.peakRssMb, files: number('Total Files'), tokens: number('Total Tokens') };
  } finally {
    await rm(out, { force: true });
  }
}

/**
 * Full scans through the API: one API and one worker process (built code, Redis), a warm-up scan
 * so the worker's tokenizer threads are loaded as in a long-lived worker, then the measured scans
 * back to back (the first with nothing cached, each later one a rescan). Wall time is that of a
 * waiting POST /v1/scan, from sending it to its 201 with the result; peak RSS is the worker's
 * VmHWM, reset before each scan.
 */
export async function apiScanRuns(repoPaths: string[]): Promise<Sample[]> {
  const deployment = await Deployment.create();
  try {
    const { baseUrl } = await deployment.startApi();
    const worker = await deployment.startWorker();
    await scanAndWait(baseUrl, WARMUP_DIR);
    const samples: Sample[] = [];
    for (const repoPath of repoPaths) samples.push((await measuredScan(baseUrl, worker.pid, repoPath)).sample);
    return samples;
  } finally {
    await deployment.close();
  }
}

/** One waiting POST /v1/scan, timed to its 201, with the worker's peak RSS over it. */
export async function measuredScan(
  baseUrl: string,
  workerPid: number,
  repoPath: string,
  options: Record<string, unknown> = {},
): Promise<{ sample: Sample; result: ScanResult }> {
  const resetOk = await resetVmHwm(workerPid);
  const started = performance.now();
  const result = await scanAndWait(baseUrl, repoPath, options);
  const wallMs = performance.now() - started;
  const kb = resetOk ? await readVmHwmKb(workerPid) : null;
  return {
    sample: {
      wallMs,
      peakRssMb: kb === null ? null : kb / 1024,
      files: result.summary.total_files,
      tokens: result.summary.estimated_tokens,
      extra: { artifact_bytes: Object.values(result.artifacts).reduce((sum, a) => sum + a.bytes, 0) },
    },
    result,
  };
}

/** POST /v1/inspect of a local path or a git URL, after a warm-up inspect; peak RSS is the API process's. */
export async function inspectRun(repoPath: string): Promise<Sample> {
  const deployment = await Deployment.create();
  try {
    const api = await deployment.startApi();
    await inspect(api.baseUrl, WARMUP_DIR);
    const resetOk = await resetVmHwm(api.process.pid);
    const started = performance.now();
    const data = await inspect(api.baseUrl, repoPath);
    const wallMs = performance.now() - started;
    const kb = resetOk ? await readVmHwmKb(api.process.pid) : null;
    return {
      wallMs,
      peakRssMb: kb === null ? null : kb / 1024,
      files: data.summary.total_files,
      tokens: data.summary.estimated_tokens,
    };
  } finally {
    await deployment.close();
  }
}
