import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { isScanError, ScanError, TERMINAL_STATES } from '@reposcan/contracts';
import type { ScanOptions, ScanRequestRecord, ScanStateRecord, ScanStatus, TokenEncoding } from '@reposcan/contracts';
import type { ScanQueue, StateSignals } from '@reposcan/queue';
import type { DiskStatus, ScanStore } from '@reposcan/storage';
import type { FaultInjector } from '@reposcan/worker';
import { StateWatch } from './state-watch.js';

export interface ScanServiceDeps {
  store: ScanStore;
  queue: ScanQueue;
  encoding: TokenEncoding;
  minFreeDiskRatio: number;
  /** How long DELETE waits for a running job to stop before removing its folder anyway. */
  cancelGraceMs?: number;
  /** Word that a scan's state changed: a waiter reads it again at once instead of at its next poll. */
  signals?: StateSignals;
  /** How often a waiter reads the state anyway (a signal can be lost, or there are none). */
  pollMs?: number;
  /** Test seam (FAULT_INJECTION): the 'accept' point, between recording a scan and enqueueing it. */
  faults?: FaultInjector;
  /** Told of every scan accepted and queued (metrics). */
  onAccepted?: (source: 'remote' | 'local' | 'upload') => void;
}

export function statusUrl(scanId: string): string {
  return `/v1/scans/${scanId}`;
}

export function eventsUrl(scanId: string): string {
  return `/v1/scans/${scanId}/events`;
}

export function toStatus(record: ScanStateRecord): ScanStatus {
  const { version: _version, ...rest } = record;
  return { ...rest, status_url: statusUrl(record.scan_id), events_url: eventsUrl(record.scan_id) };
}

export function isTerminal(record: ScanStateRecord): boolean {
  return TERMINAL_STATES.includes(record.state);
}

/** How long one look at the volume (free space, a probe write) serves the requests that follow. */
const DISK_CHECK_MS = 1_000;
/** After the queue said it is full, new scans are refused without touching the volume for this long. */
const QUEUE_FULL_MEMORY_MS = 500;

/** Accepting, following and deleting scans; state lives on the volume, the queue only dispatches. */
export class ScanService {
  private readonly pollMs: number;
  private disk: { checkedAt: number; status: Promise<DiskStatus> } | null = null;
  private queueFull: { until: number; error: ScanError } | null = null;

  constructor(private readonly deps: ScanServiceDeps) {
    this.pollMs = deps.pollMs ?? 150;
  }

  /**
   * Refuse new work when the volume is nearly full (507) rather than fail it half-way. One look
   * serves a second of requests, so a flood of them does not each stat and probe the volume.
   */
  async assertDiskRoom(): Promise<void> {
    const now = Date.now();
    if (this.disk === null || now - this.disk.checkedAt > DISK_CHECK_MS) this.disk = { checkedAt: now, status: this.deps.store.diskStatus() };
    const disk = await this.disk.status;
    if (!disk.writable || disk.freeRatio < this.deps.minFreeDiskRatio) {
      throw new ScanError('DISK_FULL', 'The server is low on disk space and is not taking new scans. Retry later.', { retryAfterSeconds: 60 });
    }
  }

  /**
   * Record the request and its queued state on the volume, then enqueue it. If the queue
   * refuses (Redis down, queue full) the folder is removed and the caller gets the 503.
   * `beforeEnqueue` lets the upload route move its archive into the scan folder first; `client`
   * (the rate limit's notion of who asked) gets the scan its client's fair share of the workers.
   */
  async submit(
    source: ScanRequestRecord['source'],
    options: ScanOptions,
    { client, beforeEnqueue }: { client?: string; beforeEnqueue?: (scanId: string) => Promise<void> } = {},
  ): Promise<ScanStateRecord> {
    const scanId = randomUUID();
    // Under a flood, refusals stay cheap: no folder is made and removed again for each one.
    if (this.queueFull !== null && Date.now() < this.queueFull.until) throw this.queueFull.error;
    const now = new Date().toISOString();
    const request: ScanRequestRecord = { version: 1, scan_id: scanId, source, options, encoding: this.deps.encoding, created_at: now };
    const state: ScanStateRecord = {
      version: 1,
      scan_id: scanId,
      state: 'queued',
      source: { type: source.type, url: source.type === 'remote' ? source.repo_path : null },
      created_at: now,
      updated_at: now,
      started_at: null,
      completed_at: null,
      attempt: 0,
      progress: { phase: 'queued', files_done: 0, files_total: 0 },
      error: null,
      result: null,
    };
    await this.deps.store.create(scanId, request, state);
    this.deps.faults?.hit('accept', source.type === 'upload' ? source.file_name : source.repo_path);
    try {
      if (beforeEnqueue) await beforeEnqueue(scanId);
      await this.deps.queue.enqueue(scanId, client === undefined ? {} : { client });
    } catch (error) {
      if (isScanError(error) && error.code === 'QUEUE_FULL') this.queueFull = { until: Date.now() + QUEUE_FULL_MEMORY_MS, error };
      await this.deps.store.remove(scanId).catch(() => {});
      throw error;
    }
    this.deps.onAccepted?.(source.type);
    return state;
  }

  async get(scanId: string): Promise<ScanStateRecord> {
    const record = await this.deps.store.readState(scanId);
    if (!record) throw new ScanError('SCAN_NOT_FOUND', `No scan ${scanId} exists (it may have expired or been deleted).`);
    return record;
  }

  /** Follows the scan's state changes; close it when done. Open it before the first `get`. */
  watch(scanId: string): StateWatch {
    return new StateWatch(this.deps.signals, scanId);
  }

  /** Read the state on every change (and every poll interval) until it is terminal or `timeoutMs` passes; returns the last state seen. */
  async waitForTerminal(scanId: string, timeoutMs: number, signal?: AbortSignal): Promise<ScanStateRecord> {
    const deadline = Date.now() + timeoutMs;
    const watch = this.watch(scanId);
    try {
      for (;;) {
        const record = await this.get(scanId);
        if (isTerminal(record) || Date.now() >= deadline || signal?.aborted) return record;
        await watch.next(Math.min(this.pollMs, Math.max(1, deadline - Date.now())), signal);
      }
    } finally {
      watch.close();
    }
  }

  /** Cancel a queued or running scan, then remove everything of it from the volume and the queue. */
  async cleanup(scanId: string): Promise<void> {
    const record = await this.get(scanId);
    if (!isTerminal(record)) {
      await this.deps.store.requestCancel(scanId);
      const removed = await this.deps.queue.remove(scanId);
      if (removed === 'active') await this.waitForTerminal(scanId, this.deps.cancelGraceMs ?? 10_000).catch(() => record);
    }
    await this.deps.store.remove(scanId);
    void this.forgetJob(scanId, Date.now() + (this.deps.cancelGraceMs ?? 10_000));
  }

  /**
   * Removes the scan's job from the queue. A cancelled job may still be active for a moment
   * after its worker recorded the outcome (BullMQ completes it once the processor returns), so
   * this retries in the background until the job can go, within the deadline.
   */
  private async forgetJob(scanId: string, deadline: number): Promise<void> {
    while ((await this.deps.queue.remove(scanId).catch(() => 'absent')) === 'active' && Date.now() < deadline) await sleep(this.pollMs);
  }
}
