import { createHmac } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import net from 'node:net';
import {
  callbackUrlHost,
  isScanError,
  ScanRequestRecord,
  TERMINAL_STATES,
  toScanStatus,
  WEBHOOK_SIGNATURE_HEADER,
} from '@reposcan/contracts';
import type { ScanStateRecord, WebhookDelivery } from '@reposcan/contracts';
import type { DeliveryProcessor } from '@reposcan/queue';
import type { Logger } from '@reposcan/runtime';
import { checkCallbackUrl } from '@reposcan/sources';
import type { RemotePolicy, RemotePolicyDeps } from '@reposcan/sources';
import type { ScanStore } from '@reposcan/storage';

export interface WebhookDeliveryDeps {
  store: ScanStore;
  /** WEBHOOK_SECRET: without it nothing is sent (the API refuses callback_url then). */
  secret: string | null;
  policy: RemotePolicy;
  timeoutMs: number;
  log: Logger;
  /** Test seam: DNS. */
  lookup?: RemotePolicyDeps['lookup'];
}

/** `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`: the timestamp is signed too, so an old delivery cannot be replayed as new. */
export function signWebhook(secret: string, body: string, unixSeconds: number): string {
  const mac = createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex');
  return `t=${unixSeconds},v1=${mac}`;
}

class DeliveryFailed extends Error {
  constructor(
    message: string,
    readonly httpStatus: number | null,
    /** A refusal of policy: another attempt would be refused the same way. */
    readonly final = false,
  ) {
    super(message);
  }
}

/** What a delivery reads and where it records each attempt: the scan's folder, or the webhook kept when the scan was deleted. */
interface DeliveryTarget {
  callbackUrl: string;
  record: ScanStateRecord;
  before: WebhookDelivery | null;
  save: (delivery: WebhookDelivery) => Promise<void>;
}

async function deliveryTarget(store: ScanStore, scanId: string): Promise<DeliveryTarget | null> {
  const request = ScanRequestRecord.safeParse(await store.readRequest(scanId).catch(() => null));
  if (request.success) {
    const callbackUrl = request.data.callback_url;
    const record = await store.readState(scanId);
    if (callbackUrl === undefined || record === null) return null;
    return {
      callbackUrl,
      record,
      before: await store.readWebhook(scanId),
      save: (delivery) => store.writeWebhook(scanId, delivery),
    };
  }
  const kept = await store.keptWebhook(scanId);
  if (kept === null) return null;
  return {
    callbackUrl: kept.callback_url,
    record: kept.record,
    before: kept.delivery,
    save: (delivery) => store.keepWebhook(scanId, { ...kept, delivery }),
  };
}

/**
 * One delivery attempt of a scan's completion webhook: re-checks the callback URL's host (DNS
 * may have changed since the submit), POSTs the scan's status to the checked address, and
 * records the outcome in `webhook.json` (or, for a deleted scan, in its kept webhook). Throws
 * when the attempt failed and another may follow.
 */
export function createDeliveryProcessor(deps: WebhookDeliveryDeps): DeliveryProcessor {
  return async ({ scanId, attempt, maxAttempts }) => {
    const { store, log } = deps;
    const target = await deliveryTarget(store, scanId);
    // Gone, or (a bug) not finished: there is nothing to tell.
    if (target === null || !TERMINAL_STATES.includes(target.record.state)) return;
    const { callbackUrl, record, before } = target;
    if (before?.state === 'delivered') return; // a job run twice delivers once
    const urlHost = callbackUrlHost(callbackUrl);
    const at = new Date().toISOString();
    try {
      if (deps.secret === null) throw new DeliveryFailed('WEBHOOK_SECRET is not set on this worker.', null, true);
      const body = JSON.stringify(toScanStatus(record));
      const status = await post(callbackUrl, body, deps.secret, deps);
      await target.save({
        url_host: urlHost,
        state: 'delivered',
        attempts: attempt,
        last_status: status,
        last_error: null,
        last_attempt_at: at,
        delivered_at: at,
      });
      log.info({ scanId, urlHost, attempt, status }, 'webhook delivered');
    } catch (error) {
      const failure =
        error instanceof DeliveryFailed
          ? error
          : new DeliveryFailed(error instanceof Error ? error.message : String(error), null);
      const last = failure.final || attempt >= maxAttempts;
      const outcome: WebhookDelivery = {
        url_host: urlHost,
        state: last ? 'failed' : 'retrying',
        attempts: attempt,
        last_status: failure.httpStatus,
        last_error: failure.message,
        last_attempt_at: at,
        delivered_at: null,
      };
      await target.save(outcome).catch((e: unknown) => {
        log.warn({ err: e, scanId }, 'could not record the webhook attempt');
      });
      log.warn({ scanId, urlHost, attempt, err: failure.message }, last ? 'webhook failed' : 'webhook attempt failed');
      if (!last) throw failure;
    }
  };
}

/** POSTs `body` to the checked address of `callbackUrl`; resolves with a 2xx status, rejects with DeliveryFailed otherwise. */
async function post(callbackUrl: string, body: string, secret: string, deps: WebhookDeliveryDeps): Promise<number> {
  let checked;
  try {
    checked = await checkCallbackUrl(callbackUrl, deps.policy, deps.lookup ? { lookup: deps.lookup } : undefined);
  } catch (error) {
    const retryable = isScanError(error) && error.retryable;
    throw new DeliveryFailed(error instanceof Error ? error.message : String(error), null, !retryable);
  }
  const { url, addresses } = checked;
  const address = addresses[0] ?? '';
  const family = net.isIPv6(address) ? 6 : 4;
  // The connection goes to the address just checked, whatever DNS answers next (the name is
  // still sent as Host and, for https, checked against the certificate).
  const lookup: LookupFunction = (_hostname, options, callback) => {
    if (options.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  };
  const signature = signWebhook(secret, body, Math.floor(Date.now() / 1000));
  const client = url.protocol === 'https:' ? https : http;
  return await new Promise<number>((resolve, reject) => {
    const req = client.request(
      url,
      {
        method: 'POST',
        lookup,
        headers: {
          'Content-Type': 'application/json',
          'Content-Length': Buffer.byteLength(body),
          'User-Agent': 'reposcan-webhook',
          [WEBHOOK_SIGNATURE_HEADER]: signature,
        },
        // Redirects are never followed (node's client does not): a 3xx is a failed delivery.
        signal: AbortSignal.timeout(deps.timeoutMs),
      },
      (res) => {
        const status = res.statusCode ?? 0;
        res.resume(); // the answer's body is not read, only drained
        res.on('error', () => {});
        if (status >= 200 && status < 300) return resolve(status);
        const what =
          status >= 300 && status < 400
            ? `The receiver answered ${status} (a redirect, which is not followed).`
            : `The receiver answered ${status}.`;
        reject(new DeliveryFailed(what, status));
      },
    );
    req.on('error', (error) => {
      const timedOut = error.name === 'AbortError' || error.name === 'TimeoutError';
      reject(
        new DeliveryFailed(
          timedOut
            ? `The receiver did not answer within ${deps.timeoutMs} ms.`
            : `Could not reach the receiver: ${error.message}`,
          null,
        ),
      );
    });
    req.end(body);
  });
}
