import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { callbackUrlHost, isScanError, ScanError, ScanRequestRecord, TERMINAL_STATES } from '@reposcan/contracts';
import type { ScanOptions, ScanStateRecord, TokenEncoding, WebhookDelivery } from '@reposcan/contracts';
import { checkCallbackUrl } from '@reposcan/sources';
import type { RemotePolicy } from '@reposcan/sources';
import type { CredentialVault, DeliveryQueue, ScanQueue, StateSignals } from '@reposcan/queue';
import { CorruptStateError, volumeRefusal } from '@reposcan/storage';
import type { DiskStatus, ScanStore } from '@reposcan/storage';
import type { FaultInjector } from '@reposcan/runtime';
import { completeFromEarlierScan } from '@reposcan/scan-worker';
import { resolvedRef } from './result-reuse.js';
import type { ReusableResult, ResultReuse } from './result-reuse.js';
import { StateWatchers } from './state-watch.js';
import type { StateListener } from './state-watch.js';

export interface ScanServiceDeps {
  store: ScanStore;
  queue: ScanQueue;
  encoding: TokenEncoding;
  minFreeDiskRatio: number;
  /** How long DELETE waits for a running job to stop before removing its folder anyway. */
  cancelGraceMs?: number;
  /** Word that a scan's state changed: its watcher reads it again at once. */
  signals?: StateSignals;
  /** The period of the fallback sweep over watched scans (a signal can be lost, or there are none). */
  pollMs?: number;
  /** Told of every read of a watched scan's state (metrics). */
  onStateRead?: () => void;
  /** Test seam (FAULT_INJECTION): the 'accept' point, between recording a scan and enqueueing it. */
  faults?: FaultInjector;
  /** Told of every scan accepted and queued (metrics). */
  onAccepted?: (source: 'remote' | 'local' | 'upload') => void;
  /** Where a request's git token waits for its worker (sealed on Redis), and for how long at most. */
  credentials?: { vault: CredentialVault; ttlMs: number };
  /** Completion webhooks: whether WEBHOOK_SECRET is set, the host rules of callback URLs, and where deliveries are queued. */
  webhooks?: { configured: boolean; policy: RemotePolicy; deliveries?: DeliveryQueue };
  /** The commit cache: a remote scan of a commit already scanned with the same options completes at once. */
  reuse?: ResultReuse;
  /** Told of every scan completed from an earlier one's result (metrics). */
  onReused?: () => void;
}

export { eventsUrl, statusUrl, toScanStatus as toStatus } from '@reposcan/contracts';

export function isTerminal(record: ScanStateRecord): boolean {
  return TERMINAL_STATES.includes(record.state);
}

/**
 * Who asks about a scan, when API keys are on: the key's name and whether it is an admin key.
 * null: keys are off and every scan is everyone's, as without keys.
 */
export type ScanAccess = { readonly name: string; readonly admin: boolean } | null;

/**
 * A scan is its creator's: another key is told it does not exist (404, not 403, so scan ids
 * cannot be probed). A scan with no owner (made before keys were turned on) is the admins' only.
 */
export function mayAccess(record: { owner?: string | undefined }, access: ScanAccess): boolean {
  return access === null || access.admin || (record.owner !== undefined && record.owner === access.name);
}

export function notFound(scanId: string): ScanError {
  return new ScanError('SCAN_NOT_FOUND', `No scan ${scanId} exists (it may have expired or been deleted).`);
}

/** How long one look at the volume (free space, a probe write) serves the requests that follow. */
const DISK_CHECK_MS = 1_000;
/** After the queue said it is full, new scans are refused without touching the volume for this long. */
const QUEUE_FULL_MEMORY_MS = 500;
/**
 * The period of the fallback sweep over watched scans. Every state write is announced, so this only
 * matters when an announcement is lost (a Redis blip): then an event or a waiting POST's answer
 * comes one to two periods later. A sweep stats each idle watched scan once (and reads it only if
 * it changed): 2 000 watched scans cost 400 stats a second, where every stream reading state.json
 * on its own every 250 ms cost 8 000 reads.
 */
const STATE_FALLBACK_MS = 5_000;
/** Between attempts to remove a cancelled scan's job that is still active. */
const FORGET_RETRY_MS = 150;

/** Accepting, following and deleting scans; state lives on the volume, the queue only dispatches. */
export class ScanService {
  /** Who waits on which scan: one watcher per scan, shared by its event streams and waiting POSTs. */
  readonly watchers: StateWatchers;
  private disk: { checkedAt: number; status: Promise<DiskStatus> } | null = null;
  private queueFull: { until: number; error: ScanError } | null = null;
  /** Aborted when the server stops: waiting submissions answer 202 at once instead of holding it. */
  private readonly stopping = new AbortController();

  constructor(private readonly deps: ScanServiceDeps) {
    this.watchers = new StateWatchers({
      signals: deps.signals,
      read: (scanId) => deps.store.readState(scanId),
      stamp: (scanId) => deps.store.stateStamp(scanId),
      fallbackMs: deps.pollMs ?? STATE_FALLBACK_MS,
      ...(deps.onStateRead ? { onRead: deps.onStateRead } : {}),
    });
  }

  /**
   * Refuse new work when the volume is nearly full (507) rather than fail it half-way. One look
   * serves a second of requests, so a flood of them does not each stat and probe the volume.
   */
  async assertDiskRoom(): Promise<void> {
    const now = Date.now();
    if (this.disk === null || now - this.disk.checkedAt > DISK_CHECK_MS)
      this.disk = { checkedAt: now, status: this.deps.store.diskStatus() };
    const refusal = volumeRefusal(await this.disk.status, this.deps.minFreeDiskRatio);
    if (refusal) throw refusal;
  }

  /**
   * Record the request and its queued state on the volume, then enqueue it. If the queue
   * refuses (Redis down, queue full) the folder is removed and the caller gets the 503.
   * `beforeEnqueue` lets the upload route move its archive into the scan folder first; `client`
   * (the rate limit's notion of who asked) gets the scan its client's fair share of the workers;
   * `owner` (the API key's name) is recorded in state.json, so every API process enforces it.
   */
  async submit(
    source: ScanRequestRecord['source'],
    options: ScanOptions,
    {
      client,
      owner,
      beforeEnqueue,
      gitToken,
      callbackUrl,
      cache = false,
      signal,
    }: {
      client?: string;
      owner?: string | null;
      beforeEnqueue?: (scanId: string) => Promise<void>;
      gitToken?: string | undefined;
      /** Checked by `checkCallbackUrl`; stored in request.json only. */
      callbackUrl?: string | undefined;
      /** A remote source may be completed from the commit cache, and its worker reuse earlier scans' files (the request's `cache`). */
      cache?: boolean;
      /** The caller went away: the commit cache's ls-remote stops. */
      signal?: AbortSignal;
    } = {},
  ): Promise<ScanStateRecord> {
    const scanId = randomUUID();
    // Under a flood, refusals stay cheap: no folder is made and removed again for each one.
    if (this.queueFull !== null && Date.now() < this.queueFull.until) throw this.queueFull.error;
    const lookup =
      cache && source.type === 'remote' && this.deps.reuse
        ? await this.deps.reuse.find(source, options, gitToken, signal)
        : null;
    const reusable = lookup?.fromScanId ? { fromScanId: lookup.fromScanId, material: lookup.material } : null;
    // Before anything else exists, so no worker can take the scan before its credential is there.
    // A scan served from the cache runs no clone: its token is not kept at all.
    if (gitToken !== undefined && reusable === null) await this.putCredential(scanId, gitToken);
    const now = new Date().toISOString();
    const request: ScanRequestRecord = {
      version: 1,
      scan_id: scanId,
      source: lookup !== null && source.type === 'remote' ? { ...source, resolved: resolvedRef(lookup) } : source,
      options,
      encoding: this.deps.encoding,
      created_at: now,
      ...(callbackUrl === undefined ? {} : { callback_url: callbackUrl }),
      ...(cache || source.type !== 'remote' ? {} : { fresh: true as const }),
    };
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
      ...(owner ? { owner } : {}),
    };
    try {
      await this.deps.store.create(scanId, request, state);
      if (callbackUrl !== undefined)
        await this.deps.store
          .writeWebhook(scanId, {
            url_host: callbackUrlHost(callbackUrl),
            state: 'pending',
            attempts: 0,
            last_status: null,
            last_error: null,
            last_attempt_at: null,
            delivered_at: null,
          })
          .catch(async (error: unknown) => {
            await this.deps.store.remove(scanId).catch(() => {});
            throw error;
          });
    } catch (error) {
      if (gitToken !== undefined) await this.forgetCredential(scanId);
      throw error;
    }
    this.deps.faults?.hit('accept', source.type === 'upload' ? source.file_name : source.repo_path);
    if (reusable !== null) {
      const completed = await this.completeFromCache(scanId, reusable);
      if (completed !== null) return completed;
      // The earlier result went away meanwhile: the scan runs as any other.
      if (gitToken !== undefined)
        await this.putCredential(scanId, gitToken).catch(async (error: unknown) => {
          await this.deps.store.remove(scanId).catch(() => {});
          throw error;
        });
    }
    try {
      if (beforeEnqueue) await beforeEnqueue(scanId);
      await this.deps.queue.enqueue(scanId, client === undefined ? {} : { client });
    } catch (error) {
      if (isScanError(error) && error.code === 'QUEUE_FULL')
        this.queueFull = { until: Date.now() + QUEUE_FULL_MEMORY_MS, error };
      await this.deps.store.remove(scanId).catch(() => {});
      if (gitToken !== undefined) await this.forgetCredential(scanId);
      throw error;
    }
    this.deps.onAccepted?.(source.type);
    return state;
  }

  /**
   * Completes the accepted scan from the earlier scan's result, and points the commit cache at
   * it (the newest scan expires last). null when that result is no longer there.
   */
  private async completeFromCache(scanId: string, reusable: ReusableResult): Promise<ScanStateRecord | null> {
    const { store, reuse } = this.deps;
    let completed: ScanStateRecord;
    try {
      completed = await completeFromEarlierScan(store, reusable.fromScanId, scanId);
    } catch {
      return null;
    }
    await reuse?.record(scanId, reusable.material);
    this.deps.onAccepted?.('remote');
    this.deps.onReused?.();
    return completed;
  }

  private async putCredential(scanId: string, gitToken: string): Promise<void> {
    const credentials = this.deps.credentials;
    if (!credentials) throw new ScanError('CREDENTIALS_KEY_MISSING', 'This server does not take git tokens.');
    await credentials.vault.put(scanId, gitToken, credentials.ttlMs);
  }

  /** Best effort: what is not deleted expires with its TTL. */
  private async forgetCredential(scanId: string): Promise<void> {
    await this.deps.credentials?.vault.delete(scanId).catch(() => {});
  }

  /**
   * Refuses a callback URL the webhook policy refuses (scheme, hosts, private addresses), or any
   * callback URL when the server has no WEBHOOK_SECRET to sign deliveries with. The worker
   * checks the host again before each delivery.
   */
  async checkCallbackUrl(url: string | undefined): Promise<string | undefined> {
    if (url === undefined) return undefined;
    const webhooks = this.deps.webhooks;
    if (!webhooks?.configured)
      throw new ScanError(
        'WEBHOOKS_NOT_CONFIGURED',
        'This server cannot send webhooks: its operator has not set WEBHOOK_SECRET. Leave out callback_url, or ask the operator to set it.',
      );
    await checkCallbackUrl(url, webhooks.policy);
    return url;
  }

  /** The completion webhook's delivery record, or null when the scan has none. */
  webhook(scanId: string): Promise<WebhookDelivery | null> {
    return this.deps.store.readWebhook(scanId);
  }

  /** The scan's state; 404 when there is none, or when `access` may not see it. */
  async get(scanId: string, access: ScanAccess = null): Promise<ScanStateRecord> {
    const record = await this.deps.store.readState(scanId);
    if (!record || !mayAccess(record, access)) throw notFound(scanId);
    return record;
  }

  /** Every reading of the scan's state from now on (`readNow`: starting with one at once), until the returned function is called. */
  watch(scanId: string, listener: StateListener, readNow = false): () => void {
    return this.watchers.watch(scanId, listener, readNow);
  }

  /** Ends every wait in progress with the state it has seen (the server is stopping). */
  stopWaiting(): void {
    this.stopping.abort();
  }

  /**
   * The state now, then every change, until it is terminal, `timeoutMs` passes, `caller` aborts or
   * the server stops; returns the last state seen.
   */
  waitForTerminal(scanId: string, timeoutMs: number, caller?: AbortSignal): Promise<ScanStateRecord> {
    const started = Date.now();
    const signal = caller ? AbortSignal.any([caller, this.stopping.signal]) : this.stopping.signal;
    return new Promise((resolve, reject) => {
      let last: ScanStateRecord | null = null;
      let timer: NodeJS.Timeout | undefined;
      const settle = (outcome: () => void): void => {
        stop();
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        outcome();
      };
      // Only once the first reading has come: before it there is no state to answer with.
      const onAbort = (): void => {
        if (last) settle(() => resolve(last as ScanStateRecord));
      };
      const stop = this.watch(
        scanId,
        (record, error) => {
          if (error !== undefined) return settle(() => reject(error));
          if (!record) return settle(() => reject(notFound(scanId)));
          const first = last === null;
          last = record;
          if (isTerminal(record) || signal?.aborted) return settle(() => resolve(record));
          if (first) {
            const left = timeoutMs - (Date.now() - started);
            if (left <= 0) return settle(() => resolve(record));
            timer = setTimeout(() => settle(() => resolve(last as ScanStateRecord)), left);
          }
        },
        true,
      );
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Cancel a queued or running scan, then remove everything of it from the volume and the queue. */
  async cleanup(scanId: string, access: ScanAccess = null): Promise<void> {
    // A corrupt state file says nothing about whether the scan runs: treat it as running, and
    // remove it. Nor does it say whose it is: with keys on, only an admin key may.
    const record = await this.get(scanId, access).catch((error: unknown) => {
      if (error instanceof CorruptStateError && mayAccess({}, access)) return null;
      if (error instanceof CorruptStateError) throw notFound(scanId);
      throw error;
    });
    let last = record;
    if (record === null || !isTerminal(record)) {
      // The queue first: while it is unreachable the request is refused (503) with nothing changed.
      const removed = await this.deps.queue.remove(scanId);
      if (removed === 'active') {
        await this.deps.store.requestCancel(scanId);
        last = await this.waitForTerminal(scanId, this.deps.cancelGraceMs ?? 10_000).catch(() => record);
      }
    }
    const kept = last !== null && (await this.keepWebhook(scanId, last));
    await this.deps.store.remove(scanId);
    // Not queued now (Redis away): the janitor queues it from the kept webhook.
    if (kept) await this.deps.webhooks?.deliveries?.enqueue(scanId).catch(() => undefined);
    await this.forgetCredential(scanId);
    void this.forgetJob(scanId, Date.now() + (this.deps.cancelGraceMs ?? 10_000));
  }

  /**
   * Keeps the completion webhook of a scan about to be deleted, unless it has none or its delivery
   * is over: the receiver still hears how the scan ended, `cancelled` when it never finished.
   */
  private async keepWebhook(scanId: string, last: ScanStateRecord): Promise<boolean> {
    const { store } = this.deps;
    const request = ScanRequestRecord.safeParse(await store.readRequest(scanId).catch(() => null));
    const callbackUrl = request.success ? request.data.callback_url : undefined;
    if (callbackUrl === undefined) return false;
    const delivery = await store.readWebhook(scanId);
    if (delivery?.state === 'delivered' || delivery?.state === 'failed') return false;
    const at = new Date().toISOString();
    const record: ScanStateRecord = isTerminal(last)
      ? last
      : { ...last, state: 'cancelled', completed_at: at, updated_at: at };
    await store.keepWebhook(scanId, { callback_url: callbackUrl, record, delivery });
    return true;
  }

  /**
   * Removes the scan's job from the queue. A cancelled job may still be active for a moment
   * after its worker recorded the outcome (BullMQ completes it once the processor returns), so
   * this retries in the background until the job can go, within the deadline.
   */
  private async forgetJob(scanId: string, deadline: number): Promise<void> {
    while ((await this.deps.queue.remove(scanId).catch(() => 'absent')) === 'active' && Date.now() < deadline)
      await sleep(FORGET_RETRY_MS);
  }
}
