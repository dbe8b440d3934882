import { randomBytes, randomUUID } from 'node:crypto';
import { mkdir, readdir, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ScanOptions } from '@reposcan/contracts';
import type { ScanRequestRecord, ScanStateRecord } from '@reposcan/contracts';
import { createMemoryTransport } from '@reposcan/queue';
import type { QueueTransport } from '@reposcan/queue';
import { VolumeTokenCache } from '@reposcan/storage';
import { createdScan, stateRecord, tempStore } from '../../../packages/storage/test/temp-store.js';
import type { TempStore } from '../../../packages/storage/test/temp-store.js';
import { createLogger } from '../src/create-logger.js';
import { createJanitor, startJanitor } from '../src/janitor.js';
import type { Janitor, JanitorOptions } from '../src/janitor.js';

const HOUR = 3_600_000;
const log = createLogger('silent', 'janitor-test');
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup(
  overrides: Partial<JanitorOptions> = {},
): Promise<{ temp: TempStore; transport: QueueTransport; janitor: (later?: number) => Janitor }> {
  const temp = await tempStore();
  const transport = createMemoryTransport({ maxWaiting: 100, attempts: 1 });
  cleanups.push(
    () => temp.cleanup(),
    () => transport.close(),
  );
  // `later`: how far the janitor's clock runs ahead, so records look as old as a test needs.
  const janitor = (later = 0): Janitor =>
    createJanitor({
      store: temp.store,
      queue: transport.queue,
      log,
      ttlHours: 24,
      maxAttemptMs: 600_000,
      settleMs: 30_000,
      now: () => Date.now() + later,
      ...overrides,
    });
  return { temp, transport, janitor };
}

const readState = async (temp: TempStore, id: string): Promise<ScanStateRecord | null> => temp.store.readState(id);

describe('janitor', () => {
  it('enqueues again a scan that was accepted but whose job never reached the queue', async () => {
    const { temp, transport, janitor } = await setup();
    const id = await createdScan(temp.store);
    expect(await transport.queue.jobState(id)).toBe('absent');
    const report = await janitor(60_000).sweep();
    expect(report.requeued).toBe(1);
    expect(await transport.queue.jobState(id)).toBe('waiting');
    // Idempotent: the job is there now, so the next sweep leaves it alone.
    expect((await janitor(60_000).sweep()).requeued).toBe(0);
  });

  it('leaves a record alone while it may still be mid-transition', async () => {
    const { temp, transport, janitor } = await setup();
    const id = await createdScan(temp.store);
    expect((await janitor(0).sweep()).requeued).toBe(0);
    expect(await transport.queue.jobState(id)).toBe('absent');
  });

  it('fails a running scan whose job the queue lost, as QUEUE_LOST, and leaves one with a live job alone', async () => {
    const { temp, transport, janitor } = await setup();
    const lost = await createdScan(temp.store, { state: 'running', attempt: 1 });
    const alive = await createdScan(temp.store, { state: 'running', attempt: 1 });
    await transport.queue.enqueue(alive);
    const report = await janitor(60_000).sweep();
    expect(report.lost).toBe(1);
    expect(await readState(temp, lost)).toMatchObject({ state: 'failed', error: { code: 'QUEUE_LOST' } });
    expect(await readState(temp, alive)).toMatchObject({ state: 'running' });
  });

  it('deletes finished scans older than the TTL and keeps newer ones, or all of them with TTL 0', async () => {
    const { temp, janitor } = await setup();
    const done = await createdScan(temp.store, { state: 'completed', completed_at: new Date().toISOString() });
    expect((await janitor(23 * HOUR).sweep()).expired).toBe(0);
    const keepForever = createJanitor({
      store: temp.store,
      queue: createMemoryTransport({ maxWaiting: 1, attempts: 1 }).queue,
      log,
      ttlHours: 0,
      maxAttemptMs: 1,
      now: () => Date.now() + 1000 * HOUR,
    });
    expect((await keepForever.sweep()).expired).toBe(0);
    expect((await janitor(25 * HOUR).sweep()).expired).toBe(1);
    expect(await readState(temp, done)).toBeNull();
    expect(await readdir(join(temp.dataDir, 'scans'))).toEqual([]);
  });

  it('removes staging folders older than the longest attempt, never a fresh one', async () => {
    const { temp, janitor } = await setup();
    const id = await createdScan(temp.store, { state: 'running', attempt: 1 });
    const old = await temp.store.createStaging(id, 1);
    const fresh = await temp.store.createStaging(id, 2);
    const longAgo = new Date(Date.now() - 2 * HOUR);
    await utimes(old.dir, longAgo, longAgo);
    // The scan's job is gone too, so the same sweep fails it; staging is tidied either way.
    const report = await janitor().sweep();
    expect(report.staleStaging).toBe(1);
    expect((await temp.store.listStaging(id)).map((s) => s.dir)).toEqual([fresh.dir]);
  });

  it('removes upload parts a crashed API left in incoming/, not one still arriving', async () => {
    const { temp, janitor } = await setup();
    const stale = join(temp.store.incomingDir(), `${randomUUID()}.zip.part`);
    const arriving = join(temp.store.incomingDir(), `${randomUUID()}.zip.part`);
    await writeFile(stale, 'PK');
    await writeFile(arriving, 'PK');
    const longAgo = new Date(Date.now() - 2 * HOUR);
    await utimes(stale, longAgo, longAgo);
    expect((await janitor().sweep()).staleUploads).toBe(1);
    expect(await readdir(temp.store.incomingDir())).toEqual([arriving.split('/').pop()]);
  });

  it('finishes deletes a crash interrupted (the trash)', async () => {
    const { temp, janitor } = await setup();
    await mkdir(join(temp.dataDir, 'trash', `${randomUUID()}.abc123`, 'deep'), { recursive: true });
    expect((await janitor().sweep()).trash).toBe(1);
    expect(await readdir(join(temp.dataDir, 'trash'))).toEqual([]);
  });

  it("where workers run, keeps each encoding's token cache to a few segments and its entry limit", async () => {
    const { temp, janitor } = await setup({ tokenCacheMaxEntries: 50 });
    const dir = temp.store.tokenCacheDir('cl100k_base');
    const cache = await VolumeTokenCache.open(dir, { maxEntries: 1000 });
    for (let i = 0; i < 20; i++) {
      for (let k = 0; k < 5; k++) cache.set(randomBytes(16), k);
      await cache.flush();
    }
    const report = await janitor().sweep();
    expect(report.tokenCachesCompacted).toBe(1);
    expect((await readdir(dir)).filter((name) => name.endsWith('.seg'))).toHaveLength(1);
    const reader = await VolumeTokenCache.open(dir, { maxEntries: 1000 });
    await reader.sync();
    expect(reader.size).toBe(50);
    expect((await janitor().sweep()).tokenCachesCompacted).toBe(0);
  });

  it('runs safely beside another janitor: one job per scan, no errors', async () => {
    const { temp, transport, janitor } = await setup();
    const ids = await Promise.all(Array.from({ length: 10 }, () => createdScan(temp.store)));
    const reports = await Promise.all([janitor(60_000).sweep(), janitor(60_000).sweep()]);
    expect(reports[0].requeued + reports[1].requeued).toBeGreaterThanOrEqual(10);
    expect(await transport.queue.waitingCount()).toBe(10);
    for (const id of ids) expect(await transport.queue.jobState(id)).toBe('waiting');
  });

  it('when started, sweeps at once and then on its interval until stopped', async () => {
    const { temp, transport } = await setup();
    const first = await createdScan(temp.store);
    const running = startJanitor({
      store: temp.store,
      queue: transport.queue,
      log,
      ttlHours: 24,
      maxAttemptMs: 600_000,
      intervalMs: 200,
      now: () => Date.now() + 60_000,
    });
    cleanups.push(() => running.stop());
    await expect.poll(() => transport.queue.jobState(first)).toBe('waiting');
    const second = await createdScan(temp.store);
    await expect.poll(() => transport.queue.jobState(second)).toBe('waiting');
    await running.stop();
    const third = await createdScan(temp.store);
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(await transport.queue.jobState(third)).toBe('absent');
  });
});

describe('janitor and completion webhooks', () => {
  /** A finished scan that asked for a webhook; `queued` records what the fake delivery queue was given. */
  async function finishedWithCallback(temp: TempStore): Promise<string> {
    const id = randomUUID();
    const at = new Date().toISOString();
    const request: ScanRequestRecord = {
      version: 1,
      scan_id: id,
      source: { type: 'remote', repo_path: 'https://github.com/octocat/Hello-World', branch: null },
      options: ScanOptions.parse({}),
      encoding: 'o200k_base',
      created_at: at,
      callback_url: 'https://hooks.example.com/x',
    };
    await temp.store.create(id, request, stateRecord(id, { state: 'completed', completed_at: at }));
    return id;
  }
  const deliveryQueue = (): {
    queued: string[];
    enqueue: (id: string) => Promise<void>;
    close: () => Promise<void>;
  } => {
    const queued: string[] = [];
    return {
      queued,
      enqueue: (id) => {
        queued.push(id);
        return Promise.resolve();
      },
      close: () => Promise.resolve(),
    };
  };

  it("queues a finished scan's webhook that no delivery has recorded, and leaves one that has", async () => {
    const deliveries = deliveryQueue();
    const { temp, janitor } = await setup({ deliveries });
    const untold = await finishedWithCallback(temp);
    const told = await finishedWithCallback(temp);
    await temp.store.writeWebhook(told, {
      url_host: 'hooks.example.com',
      state: 'delivered',
      attempts: 1,
      last_status: 200,
      last_error: null,
      last_attempt_at: new Date().toISOString(),
      delivered_at: new Date().toISOString(),
    });
    await createdScan(temp.store, { state: 'completed', completed_at: new Date().toISOString() }); // no callback_url
    expect((await janitor(0).sweep()).webhooksRequeued).toBe(0); // just finished: its own queueing may be under way
    const report = await janitor(60_000).sweep();
    expect(deliveries.queued).toEqual([untold]);
    expect(report.webhooksRequeued).toBe(1);
    expect((await janitor(2 * HOUR).sweep()).webhooksRequeued).toBe(0); // long over
  });

  it("queues a deleted scan's kept webhook until it is delivered, then drops it", async () => {
    const deliveries = deliveryQueue();
    const { temp, janitor } = await setup({ deliveries });
    const id = await finishedWithCallback(temp);
    const record = (await temp.store.readState(id)) as ScanStateRecord;
    await temp.store.keepWebhook(id, { callback_url: 'https://hooks.example.com/x', record, delivery: null });
    await temp.store.remove(id);
    expect((await temp.store.keptWebhook(id))?.record.scan_id).toBe(id);
    await janitor(60_000).sweep();
    expect(deliveries.queued).toEqual([id]);
    const kept = (await temp.store.keptWebhook(id)) as NonNullable<Awaited<ReturnType<typeof temp.store.keptWebhook>>>;
    await temp.store.keepWebhook(id, {
      ...kept,
      delivery: {
        ...kept.delivery,
        url_host: 'hooks.example.com',
        state: 'delivered',
        attempts: 1,
        last_status: 200,
        last_error: null,
        last_attempt_at: null,
        delivered_at: new Date().toISOString(),
      },
    });
    const report = await janitor(60_000).sweep();
    expect(report.keptWebhooksDropped).toBe(1);
    expect(await temp.store.keptWebhook(id)).toBeNull();
    expect(await temp.store.listKeptWebhooks()).toEqual([]);
  });
});
