import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { purgeQueuePrefix } from '@reposcan/queue';
import { postScan, waitCompleted } from './support/scenarios.js';
import { startTestApi } from './support/test-runtime.js';
import type { TestApi } from './support/test-runtime.js';
import { startReceiver, verifySignature } from './support/webhook-receiver.js';
import type { WebhookReceiver } from './support/webhook-receiver.js';
import { startWorkerProcess } from './support/worker-processes.js';
import type { ServiceProcess } from './support/worker-processes.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const SECRET = 'redis-webhook-secret-0123456789';

describe('completion webhooks, BullMQ on Redis with a separate worker process', () => {
  const prefix = `reposcan-webhooks-${randomUUID().slice(0, 8)}`;
  // The API checks callback_url at submit, the worker before each delivery: both need the policy.
  const webhookEnv = {
    WEBHOOK_SECRET: SECRET,
    WEBHOOK_ALLOW_HTTP: 'true',
    WEBHOOK_ALLOW_PRIVATE_HOSTS: 'true',
    WEBHOOK_RETRY_BASE_MS: '10',
    WEBHOOK_TIMEOUT_SECONDS: '2',
  };
  let api: TestApi;
  let worker: ServiceProcess;
  const receivers: WebhookReceiver[] = [];
  const startWorker = (env: Record<string, string> = {}): Promise<ServiceProcess> =>
    startWorkerProcess({
      REDIS_URL,
      ROLE: 'worker',
      QUEUE_PREFIX: prefix,
      DATA_DIR: api.dataDir,
      ALLOWED_LOCAL_ROOTS: api.localRoot,
      WORKER_CONCURRENCY: '1',
      ...webhookEnv,
      ...env,
    });

  beforeAll(async () => {
    api = await startTestApi({ REDIS_URL, ROLE: 'api', QUEUE_PREFIX: prefix, ...webhookEnv });
    worker = await startWorker();
  });
  afterAll(async () => {
    await worker?.stop();
    await Promise.all(receivers.map((r) => r.close()));
    await api?.close();
    await purgeQueuePrefix(REDIS_URL, prefix);
  });

  const status = async (scanId: string): Promise<Record<string, unknown>> =>
    ((await (await fetch(`${api.baseUrl}/v1/scans/${scanId}`)).json()) as { data: Record<string, unknown> }).data;

  async function deliveredWebhook(scanId: string): Promise<Record<string, unknown>> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const webhook = (await status(scanId)).webhook as Record<string, unknown> | undefined;
      if (webhook?.state === 'delivered' || webhook?.state === 'failed') return webhook;
      if (Date.now() > deadline) throw new Error(`webhook still ${JSON.stringify(webhook)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  it('the worker process delivers a signed status once, retrying a receiver that failed twice', async () => {
    const hook = await startReceiver([500, 503, 200]);
    receivers.push(hook);
    const response = await postScan(
      api,
      { repo_path: api.repoDir, callback_url: `${hook.url}/hooks?key=s3cr3t` },
      '?wait=false',
    );
    expect(response.status).toBe(202);
    const scanId = ((await response.json()) as { data: { scan_id: string } }).data.scan_id;
    expect((await waitCompleted(api, scanId)).state).toBe('completed');
    const webhook = await deliveredWebhook(scanId);
    expect(webhook).toMatchObject({ state: 'delivered', attempts: 3, last_status: 200, last_error: null });
    expect(hook.deliveries.map((d) => d.path)).toEqual(['/hooks?key=s3cr3t', '/hooks?key=s3cr3t', '/hooks?key=s3cr3t']);
    const last = hook.deliveries[2];
    expect(verifySignature(last?.headers['x-reposcan-signature'] as string, last?.body ?? '', SECRET)).toBe(true);
    expect(JSON.parse(last?.body ?? '{}')).toMatchObject({ scan_id: scanId, state: 'completed' });
    // The worker logged the deliveries by host only: neither the secret nor the URL's query. The
    // line follows the record the status reads, and reaches this process a moment later.
    const logDeadline = Date.now() + 10_000;
    while (!JSON.stringify(worker.logs).includes('webhook delivered') && Date.now() < logDeadline)
      await new Promise((r) => setTimeout(r, 50));
    const logged = JSON.stringify(worker.logs);
    expect(logged).toContain('webhook delivered');
    expect(logged).not.toContain('s3cr3t');
    expect(logged).not.toContain(SECRET);
  });

  it('a scan deleted before any worker took it still tells its receiver: cancelled, signed', async () => {
    await worker.stop(); // nothing takes the scan: it stays queued
    const hook = await startReceiver([200]);
    receivers.push(hook);
    const response = await postScan(api, { repo_path: api.repoDir, callback_url: `${hook.url}/gone` }, '?wait=false');
    expect(response.status).toBe(202);
    const scanId = ((await response.json()) as { data: { scan_id: string } }).data.scan_id;
    expect((await fetch(`${api.baseUrl}/v1/cleanup/${scanId}`, { method: 'DELETE' })).status).toBe(200);
    expect((await fetch(`${api.baseUrl}/v1/scans/${scanId}`)).status).toBe(404);
    worker = await startWorker({ JANITOR_INTERVAL_SECONDS: '1' });
    const deadline = Date.now() + 30_000;
    while (hook.deliveries.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const [delivery] = hook.deliveries;
    expect(verifySignature(delivery?.headers['x-reposcan-signature'] as string, delivery?.body ?? '', SECRET)).toBe(
      true,
    );
    expect(JSON.parse(delivery?.body ?? '{}')).toMatchObject({ scan_id: scanId, state: 'cancelled' });
    // Once delivered, the janitor drops what was kept for it; it is never sent twice.
    const kept = `${api.dataDir}/webhooks/${scanId}.json`;
    while (existsSync(kept) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(existsSync(kept)).toBe(false);
    expect(hook.deliveries).toHaveLength(1);
  });
});
