// The built API and worker as separate processes on Redis, as deployed, and the HTTP calls the
// benchmark makes against them.
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { purgeQueuePrefix } from '@reposcan/queue';
import { CORPORA_DIR, REPO_ROOT } from './corpora.js';
import { startService } from './processes.js';
import type { ServiceProcess } from './processes.js';

const IMAGE_ARENAS = /\bMALLOC_ARENA_MAX=(\d+)/.exec(readFileSync(join(REPO_ROOT, 'Dockerfile'), 'utf8'))?.[1];
/** glibc's arena cap as the image sets it (Dockerfile), so reposcan's processes run here as deployed. */
export const IMAGE_MALLOC_ENV: Record<string, string> =
  IMAGE_ARENAS === undefined ? {} : { MALLOC_ARENA_MAX: IMAGE_ARENAS };

const API_MAIN = join(REPO_ROOT, 'apps/api/dist/main.js');
const WORKER_MAIN = join(REPO_ROOT, 'apps/worker/dist/main.js');

/** One deployment: a DATA_DIR and a queue prefix of its own, shared by its API and workers. */
export class Deployment {
  readonly env: Record<string, string>;
  private readonly processes = new Set<ServiceProcess>();

  private constructor(
    readonly base: string,
    extraEnv: Record<string, string>,
  ) {
    this.env = {
      HOST: '127.0.0.1',
      PORT: '0',
      DATA_DIR: join(base, 'data'),
      REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
      QUEUE_PREFIX: `bench-${randomUUID()}`,
      ALLOWED_LOCAL_ROOTS: CORPORA_DIR,
      // The production default: every request is logged.
      LOG_LEVEL: 'info',
      RATE_LIMIT_PER_MINUTE: '0',
      INSPECT_RATE_LIMIT_PER_MINUTE: '0',
      MAX_SCAN_FILES: '10000000',
      MAX_QUEUED_SCANS: '10000',
      SCAN_TIMEOUT_SECONDS: '3600',
      INSPECT_TIMEOUT_SECONDS: '600',
      SCAN_TTL_HOURS: '0',
      JOB_ATTEMPTS: '1',
      WORKER_CONCURRENCY: '1',
      // The loopback git server of the clone-path runs.
      GIT_ALLOW_HTTP: 'true',
      GIT_ALLOW_PRIVATE_HOSTS: 'true',
      GIT_ALLOWED_HOSTS: '127.0.0.1',
      ...IMAGE_MALLOC_ENV,
      ...extraEnv,
    };
  }

  static async create(extraEnv: Record<string, string> = {}): Promise<Deployment> {
    return new Deployment(await mkdtemp(join(tmpdir(), 'reposcan-bench-deploy-')), extraEnv);
  }

  async startApi(): Promise<{ process: ServiceProcess; baseUrl: string }> {
    const api = await startService(
      process.execPath,
      [API_MAIN],
      { ...this.env, ROLE: 'api' },
      (line) => typeof line.msg === 'string' && line.msg.startsWith('listening on '),
    );
    this.processes.add(api);
    const baseUrl = (api.readyLine.msg as string).slice('listening on '.length);
    return { process: api, baseUrl };
  }

  /** A `ROLE=worker` process; with `cpu`, held to that one core (`taskset`), as a container's cpuset would. */
  async startWorker(options: { cpu?: number; env?: Record<string, string> } = {}): Promise<ServiceProcess> {
    const [command, args] =
      options.cpu === undefined
        ? [process.execPath, [WORKER_MAIN]]
        : ['taskset', ['--cpu-list', String(options.cpu), process.execPath, WORKER_MAIN]];
    const worker = await startService(
      command,
      args,
      { ...this.env, ...options.env, ROLE: 'worker' },
      (line) => line.msg === 'scan worker started',
    );
    this.processes.add(worker);
    return worker;
  }

  async stop(service: ServiceProcess): Promise<void> {
    await service.stop();
    this.processes.delete(service);
  }

  /** Stops every process, removes the data directory and the queue's keys. */
  async close(): Promise<void> {
    await Promise.all([...this.processes].map((p) => p.stop()));
    this.processes.clear();
    await rm(this.base, { recursive: true, force: true });
    await purgeQueuePrefix(this.env.REDIS_URL as string, this.env.QUEUE_PREFIX as string);
  }
}

interface Envelope<T> {
  status: 'success' | 'error';
  data: T;
  code?: string;
  detail?: string;
}

export async function call<T>(
  baseUrl: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Envelope<T> }> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Envelope<T> };
}

export interface ScanStatus {
  state: 'queued' | 'running' | 'completed' | 'failed' | 'cancelled';
  started_at: string | null;
  completed_at: string | null;
  error?: { code: string; message: string };
}

/** The part of a completed scan's 201 answer the bench reads. */
export interface ScanResult {
  scan_id: string;
  summary: { total_files: number; total_size: number; estimated_tokens: number };
  artifacts: Record<string, { bytes: number }>;
  /** Set when the commit cache served the scan: the earlier scan's id. */
  cached_from?: string;
  /** A change digest's (`base_ref`) commits and counts of changed paths. */
  changes?: {
    base_commit: string;
    head_commit: string | null;
    counts: { added: number; modified: number; renamed: number; deleted: number; binary: number };
  };
}

/**
 * POST /v1/scan as a client that wants the result: the API holds the request until the worker
 * has published (the worker's state signal wakes it) and answers 201 with the result. `options`
 * are request fields beside `repo_path` (`base_ref`, …).
 */
export async function scanAndWait(
  baseUrl: string,
  repoPath: string,
  options: Record<string, unknown> = {},
): Promise<ScanResult> {
  const { status, body } = await call<ScanResult>(baseUrl, 'POST', '/v1/scan', { repo_path: repoPath, ...options });
  if (status !== 201) throw new Error(`POST /v1/scan answered ${status}: ${JSON.stringify(body)}`);
  return body.data;
}

/** POST /v1/scan?wait=false. */
export async function submitScan(baseUrl: string, repoPath: string): Promise<string> {
  const { status, body } = await call<{ scan_id: string }>(baseUrl, 'POST', '/v1/scan?wait=false', {
    repo_path: repoPath,
  });
  if (status !== 202) throw new Error(`POST /v1/scan answered ${status}: ${JSON.stringify(body)}`);
  return body.data.scan_id;
}

export async function scanStatus(baseUrl: string, scanId: string): Promise<ScanStatus> {
  const { status, body } = await call<ScanStatus>(baseUrl, 'GET', `/v1/scans/${scanId}`);
  if (status !== 200) throw new Error(`GET /v1/scans/${scanId} answered ${status}: ${JSON.stringify(body)}`);
  return body.data;
}

export interface InspectData {
  summary: { total_files: number; estimated_tokens: number };
}

export async function inspect(baseUrl: string, repoPath: string): Promise<InspectData> {
  const { status, body } = await call<InspectData>(baseUrl, 'POST', '/v1/inspect', { repo_path: repoPath });
  if (status !== 200) throw new Error(`POST /v1/inspect answered ${status}: ${JSON.stringify(body)}`);
  return body.data;
}
