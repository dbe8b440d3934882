import type { LookupAddress } from 'node:dns';
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ScanOptions } from '@reposcan/contracts';
import type { ScanRequestRecord } from '@reposcan/contracts';
import { stateRecord, tempStore } from '../../../packages/storage/test/temp-store.js';
import { createDeliveryProcessor } from '../src/webhook-delivery.js';

// The delivery's re-check of the callback host, against a real store in a temporary folder with
// an injected resolver: a refused address is refused before any connection is opened.

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function finishedScanWithCallback(callbackUrl: string) {
  const temp = await tempStore();
  cleanups.push(() => temp.cleanup());
  const scanId = randomUUID();
  const request: ScanRequestRecord = {
    version: 1,
    scan_id: scanId,
    source: { type: 'local', repo_path: '/repos/sample' },
    options: ScanOptions.parse({}),
    encoding: 'o200k_base',
    created_at: new Date().toISOString(),
    callback_url: callbackUrl,
  };
  await temp.store.create(scanId, request, stateRecord(scanId, { source: { type: 'local', url: null } }));
  await temp.store.updateState(scanId, (s) => ({
    ...s,
    state: 'failed',
    completed_at: new Date().toISOString(),
    error: { code: 'INTERNAL_ERROR', message: 'x' },
  }));
  return { store: temp.store, scanId };
}

describe('webhook delivery', () => {
  it('checks the host again at delivery: a name that now resolves to a private address fails for good, unsent', async () => {
    const { store, scanId } = await finishedScanWithCallback('https://hooks.example.com/x?token=t0k3n');
    const lines: string[] = [];
    const lookup = vi.fn((): Promise<LookupAddress[]> => Promise.resolve([{ address: '10.0.0.7', family: 4 }]));
    const deliver = createDeliveryProcessor({
      store,
      secret: 'a-secret-of-sixteen-chars',
      policy: { allowedHosts: '*', allowHttp: false, allowPrivateHosts: false },
      timeoutMs: 1000,
      log: pino({ level: 'info' }, { write: (line: string) => lines.push(line) }),
      lookup,
    });
    // Not the last attempt, and still no retry: policy would refuse every one.
    await expect(deliver({ scanId, attempt: 1, maxAttempts: 6 })).resolves.toBeUndefined();
    expect(lookup).toHaveBeenCalledWith('hooks.example.com', { all: true });
    expect(await store.readWebhook(scanId)).toMatchObject({
      url_host: 'hooks.example.com',
      state: 'failed',
      attempts: 1,
      last_status: null,
      delivered_at: null,
    });
    expect((await store.readWebhook(scanId))?.last_error).toContain('private');
    expect(lines.join('')).not.toContain('t0k3n');
  });

  it('a failure with attempts left throws, so the queue retries; the status says retrying', async () => {
    const { store, scanId } = await finishedScanWithCallback('https://hooks.example.com/x');
    const lookup = vi.fn(() => Promise.reject(Object.assign(new Error('dns down'), { code: 'EAI_AGAIN' })));
    const deliver = createDeliveryProcessor({
      store,
      secret: 'a-secret-of-sixteen-chars',
      policy: { allowedHosts: '*', allowHttp: false, allowPrivateHosts: false },
      timeoutMs: 1000,
      log: pino({ level: 'silent' }),
      lookup,
    });
    await expect(deliver({ scanId, attempt: 2, maxAttempts: 6 })).rejects.toThrow('could not be resolved');
    expect(await store.readWebhook(scanId)).toMatchObject({ state: 'retrying', attempts: 2 });
    await expect(deliver({ scanId, attempt: 6, maxAttempts: 6 })).resolves.toBeUndefined();
    expect(await store.readWebhook(scanId)).toMatchObject({ state: 'failed', attempts: 6 });
  });
});
