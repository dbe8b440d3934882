import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postScan, waitCompleted } from './support/scenarios.js';
import { startTestApi } from './support/test-runtime.js';
import type { TestApi } from './support/test-runtime.js';
import { startReceiver, verifySignature } from './support/webhook-receiver.js';
import type { WebhookReceiver } from './support/webhook-receiver.js';
import { buildZip } from './support/zips.js';

const SECRET = 'test-webhook-secret-0123456789';

interface Envelope {
  data: Record<string, unknown> & { scan_id?: string };
  code?: string;
  detail?: string;
}

async function body(response: Response): Promise<Envelope> {
  return (await response.json()) as Envelope;
}

interface WebhookBlock {
  url_host: string;
  state: string;
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  delivered_at: string | null;
}

async function webhookOf(api: TestApi, scanId: string): Promise<WebhookBlock | undefined> {
  return (await body(await fetch(`${api.baseUrl}/v1/scans/${scanId}`))).data.webhook as WebhookBlock | undefined;
}

async function waitForWebhook(
  api: TestApi,
  scanId: string,
  done: (w: WebhookBlock) => boolean,
  timeoutMs = 30_000,
): Promise<WebhookBlock> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const webhook = await webhookOf(api, scanId);
    if (webhook && done(webhook)) return webhook;
    if (Date.now() > deadline) throw new Error(`webhook of ${scanId} still ${JSON.stringify(webhook)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function scanWithCallback(api: TestApi, callbackUrl: string): Promise<string> {
  const response = await postScan(api, { repo_path: api.repoDir, callback_url: callbackUrl }, '?wait=false');
  expect(response.status).toBe(202);
  return String((await body(response)).data.scan_id);
}

describe('completion webhooks, embedded mode', () => {
  // Loopback receivers need http and private addresses; retries are shortened to 10 ms units
  // (10, 40, 150, 600, 3000 ms) and an attempt to 2 s, so a whole retry series fits a test.
  let api: TestApi;
  const receivers: WebhookReceiver[] = [];
  const receiver = async (...args: Parameters<typeof startReceiver>): Promise<WebhookReceiver> => {
    const r = await startReceiver(...args);
    receivers.push(r);
    return r;
  };

  beforeAll(async () => {
    api = await startTestApi({
      WEBHOOK_SECRET: SECRET,
      WEBHOOK_ALLOW_HTTP: 'true',
      WEBHOOK_ALLOW_PRIVATE_HOSTS: 'true',
      WEBHOOK_RETRY_BASE_MS: '10',
      WEBHOOK_TIMEOUT_SECONDS: '2',
      WORKER_CONCURRENCY: '1',
    });
  });
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    await api?.close();
  });

  it('a completed scan is delivered once, signed, with the status GET shows', async () => {
    const hook = await receiver([200]);
    const scanId = await scanWithCallback(api, `${hook.url}/hooks/reposcan?token=abc`);
    const status = await waitCompleted(api, scanId);
    expect(status.state).toBe('completed');
    const webhook = await waitForWebhook(api, scanId, (w) => w.state === 'delivered');
    expect(webhook).toMatchObject({ attempts: 1, last_status: 200, last_error: null });
    expect(webhook.url_host).toBe(new URL(hook.url).host); // never the path or the token in its query
    await new Promise((r) => setTimeout(r, 300));
    expect(hook.deliveries).toHaveLength(1);
    const [delivery] = hook.deliveries;
    expect(delivery?.path).toBe('/hooks/reposcan?token=abc');
    expect(delivery?.headers['content-type']).toBe('application/json');
    expect(verifySignature(delivery?.headers['x-reposcan-signature'] as string, delivery?.body ?? '', SECRET)).toBe(
      true,
    );
    expect(
      verifySignature(delivery?.headers['x-reposcan-signature'] as string, delivery?.body ?? '', 'another-secret-123'),
    ).toBe(false);
    // README's check also refuses the same body signed long ago: a replay.
    const then = Math.floor(Date.now() / 1000) - 600;
    const replayed = `t=${then},v1=${createHmac('sha256', SECRET)
      .update(`${then}.${delivery?.body ?? ''}`)
      .digest('hex')}`;
    expect(verifySignature(replayed, delivery?.body ?? '', SECRET)).toBe(false);
    const sent = JSON.parse(delivery?.body ?? '{}') as Record<string, unknown>;
    const { webhook: _shownAfter, ...shown } = (await body(await fetch(`${api.baseUrl}/v1/scans/${scanId}`))).data;
    expect(sent).toEqual(shown);
    expect(sent.state).toBe('completed');
  });

  it('retries a receiver that answers 500 until it answers 200, and shows it delivered', async () => {
    const hook = await receiver([500, 500, 200]);
    const scanId = await scanWithCallback(api, `${hook.url}/flaky`);
    const webhook = await waitForWebhook(api, scanId, (w) => w.state === 'delivered');
    expect(webhook).toMatchObject({ attempts: 3, last_status: 200, last_error: null });
    expect(hook.deliveries).toHaveLength(3);
    // Each attempt signs anew.
    for (const d of hook.deliveries)
      expect(verifySignature(d.headers['x-reposcan-signature'] as string, d.body, SECRET)).toBe(true);
  });

  it('a receiver that hangs holds no scan: the next scan completes, the attempt times out and is retried', async () => {
    const hook = await receiver(['hang']);
    const scanId = await scanWithCallback(api, `${hook.url}/slow`);
    await waitCompleted(api, scanId);
    const deadline = Date.now() + 10_000;
    while (hook.deliveries.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const hung = hook.deliveries[0];
    expect(hung).toBeDefined();
    // One scan at a time (WORKER_CONCURRENCY=1), and the delivery is still waiting on its receiver.
    const next = await postScan(api, { repo_path: api.repoDir });
    expect(next.status).toBe(201);
    expect(hung?.closedAt).toBeUndefined();
    const webhook = await waitForWebhook(api, scanId, (w) => w.attempts >= 1 && w.state !== 'pending');
    expect(webhook.state).toMatch(/^(retrying|failed)$/);
    expect(webhook.last_status).toBeNull();
    expect(webhook.last_error).toContain('did not answer within 2000 ms');
    expect(hung?.closedAt).toBeDefined();
  });

  it('does not follow a redirect: every attempt fails and the target is never called', async () => {
    const target = await receiver([200]);
    const hook = await receiver([{ redirect: `${target.url}/elsewhere` }]);
    const scanId = await scanWithCallback(api, `${hook.url}/moved`);
    const webhook = await waitForWebhook(api, scanId, (w) => w.state === 'failed');
    expect(webhook).toMatchObject({ attempts: 6, last_status: 302, delivered_at: null });
    expect(webhook.last_error).toContain('redirect');
    expect(hook.deliveries).toHaveLength(6);
    expect(target.deliveries).toHaveLength(0);
  });

  it('an upload takes callback_url in its query', async () => {
    const hook = await receiver([200]);
    const zip = await buildZip(`${api.dataDir}/../webhook.zip`, { 'readme.md': '# hello\n' });
    const form = new FormData();
    form.append('file', new Blob([zip]), 'hello.zip');
    const response = await fetch(`${api.baseUrl}/v1/upload?callback_url=${encodeURIComponent(`${hook.url}/upload`)}`, {
      method: 'POST',
      body: form,
    });
    expect(response.status).toBe(201);
    const scanId = String((await body(response)).data.scan_id);
    await waitForWebhook(api, scanId, (w) => w.state === 'delivered');
    expect(JSON.parse(hook.deliveries[0]?.body ?? '{}')).toMatchObject({ scan_id: scanId, state: 'completed' });
  });
});

describe('callback_url refused at submit', () => {
  let strict: TestApi;
  let unsigned: TestApi;
  beforeAll(async () => {
    [strict, unsigned] = await Promise.all([
      startTestApi({ WEBHOOK_SECRET: SECRET, WEBHOOK_ALLOWED_HOSTS: 'hooks.example.com', WORKER_CONCURRENCY: '1' }),
      startTestApi({ WORKER_CONCURRENCY: '1' }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([strict?.close(), unsigned?.close()]);
  });

  const refusal = async (api: TestApi, callbackUrl: string): Promise<[number, string | undefined, string]> => {
    const response = await postScan(api, { repo_path: api.repoDir, callback_url: callbackUrl }, '?wait=false');
    const envelope = await body(response);
    return [response.status, envelope.code, envelope.detail ?? ''];
  };

  it('refuses plain http without WEBHOOK_ALLOW_HTTP', async () => {
    const [status, code, detail] = await refusal(strict, 'http://hooks.example.com/x');
    expect([status, code]).toEqual([403, 'SCHEME_NOT_ALLOWED']);
    expect(detail).toContain('WEBHOOK_ALLOW_HTTP');
  });

  it('refuses loopback and private addresses without WEBHOOK_ALLOW_PRIVATE_HOSTS', async () => {
    for (const url of ['https://127.0.0.1:9/x', 'https://localhost/x', 'https://[::1]/x', 'https://10.1.2.3/x']) {
      const [status, code, detail] = await refusal(strict, url);
      expect([url, status, code]).toEqual([url, 403, 'PRIVATE_ADDRESS']);
      expect(detail).toContain('WEBHOOK_ALLOW_PRIVATE_HOSTS');
    }
  });

  it('refuses a host outside WEBHOOK_ALLOWED_HOSTS', async () => {
    const [status, code, detail] = await refusal(strict, 'https://other.example.org/x');
    expect([status, code]).toEqual([403, 'HOST_NOT_ALLOWED']);
    expect(detail).toContain('WEBHOOK_ALLOWED_HOSTS');
  });

  it('refuses what is not an absolute URL, and credentials in it', async () => {
    expect((await refusal(strict, 'not a url')).slice(0, 2)).toEqual([400, 'INVALID_CALLBACK_URL']);
    expect((await refusal(strict, 'ftp://hooks.example.com/x')).slice(0, 2)).toEqual([403, 'SCHEME_NOT_ALLOWED']);
    expect((await refusal(strict, 'https://u:p@hooks.example.com/x')).slice(0, 2)).toEqual([403, 'CREDENTIALS_IN_URL']);
  });

  it('refuses any callback_url while WEBHOOK_SECRET is unset, and nothing is accepted', async () => {
    const [status, code, detail] = await refusal(unsigned, 'https://hooks.example.com/x');
    expect([status, code]).toEqual([422, 'WEBHOOKS_NOT_CONFIGURED']);
    expect(detail).toContain('WEBHOOK_SECRET');
    const upload = await fetch(
      `${unsigned.baseUrl}/v1/upload?callback_url=${encodeURIComponent('https://hooks.example.com/x')}`,
      {
        method: 'POST',
        body: (() => {
          const f = new FormData();
          f.append('file', new Blob([Buffer.from('PK\x05\x06' + '\0'.repeat(18))]), 'a.zip');
          return f;
        })(),
      },
    );
    expect(upload.status).toBe(422);
    // Without callback_url the same server scans as before.
    expect((await postScan(unsigned, { repo_path: unsigned.repoDir })).status).toBe(201);
  });
});
