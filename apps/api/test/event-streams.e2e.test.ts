import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCAN_PHASES } from '@reposcan/contracts';
import type { ScanStateRecord } from '@reposcan/contracts';
import { ScanStore } from '@reposcan/storage';
import { openStream } from './support/live-sse.js';
import type { LiveStream } from './support/live-sse.js';
import { sample, scrape } from './support/prometheus.js';
import { postScan, writeLargeTree } from './support/scenarios.js';
import { startTestApi } from './support/test-runtime.js';
import type { TestApi } from './support/test-runtime.js';

// ROLE=api without REDIS_URL: an in-memory queue that no worker takes from, so a scan stays
// queued until the test itself writes its next state, exactly when it wants.
const NO_WORKER = { ROLE: 'api' };
// The fallback read is ten minutes away unless a test is about it: only signals bring changes.
const NO_FALLBACK = { statePollMs: 600_000 };

async function submitQueued(api: TestApi): Promise<string> {
  const response = await fetch(`${api.baseUrl}/v1/scan?wait=false`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ repo_path: api.repoDir }),
  });
  expect(response.status).toBe(202);
  return ((await response.json()) as { data: { scan_id: string } }).data.scan_id;
}

async function metric(api: TestApi, name: string): Promise<number | undefined> {
  return sample(await scrape(api.baseUrl), name);
}

/** Polls until `check` holds, at most 10 s; fails with `what` otherwise. */
async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`still not so after 10 s: ${what}`);
}

const eventsUrl = (api: TestApi, scanId: string) => `${api.baseUrl}/v1/scans/${scanId}/events`;

/** What a stream's events say, in order: `state:queued`, `progress:2/3` … */
function story(stream: LiveStream): string[] {
  return stream.events.map((e) => {
    const data = e.data as { state: string; progress: { files_done: number; files_total: number } };
    return e.event === 'state'
      ? `state:${data.state}`
      : `progress:${data.progress.files_done}/${data.progress.files_total}`;
  });
}

describe('event streams share one watcher per scan', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi(NO_WORKER, NO_FALLBACK);
  });
  afterAll(async () => {
    await api?.close();
  });

  it('every stream gets every state and progress event, then the terminal one, and closes; one watcher and one read per change serve them all', async () => {
    const scanId = await submitQueued(api);
    const streams = await Promise.all(Array.from({ length: 20 }, () => openStream(eventsUrl(api, scanId))));
    for (const s of streams) expect(s.status).toBe(200);
    await Promise.all(streams.map((s) => s.waitFor(1)));
    expect(await metric(api, 'reposcan_event_streams_open')).toBe(20);
    expect(await metric(api, 'reposcan_state_watchers')).toBe(1);

    const readsBefore = (await metric(api, 'reposcan_state_reads_total')) as number;
    const now = () => new Date().toISOString();
    const steps: Array<(r: ScanStateRecord) => ScanStateRecord> = [
      (r) => ({
        ...r,
        state: 'running',
        attempt: 1,
        started_at: now(),
        progress: { phase: 'read', files_done: 0, files_total: 3 },
      }),
      (r) => ({ ...r, progress: { ...r.progress, files_done: 1 } }),
      (r) => ({ ...r, progress: { ...r.progress, files_done: 2 } }),
      (r) => ({ ...r, progress: { ...r.progress, files_done: 3 } }),
      (r) => ({
        ...r,
        state: 'failed',
        completed_at: now(),
        error: { code: 'SCAN_TIMEOUT', message: 'The scan took longer than SCAN_TIMEOUT_SECONDS.' },
      }),
    ];
    for (const [i, step] of steps.entries()) {
      // As a worker would: the write is announced, and every stream's watcher reads it once.
      await api.runtime.store.updateState(scanId, step);
      await Promise.all(streams.map((s) => s.waitFor(i + 2)));
    }
    for (const s of streams) {
      expect(await s.ended).toEqual({ byServer: true });
      expect(story(s)).toEqual([
        'state:queued',
        'state:running',
        'progress:1/3',
        'progress:2/3',
        'progress:3/3',
        'state:failed',
      ]);
    }
    // Twenty streams, five changes: five reads, not a hundred.
    expect((await metric(api, 'reposcan_state_reads_total')) as number).toBe(readsBefore + steps.length);
    await until(
      'every stream and watcher is released',
      async () =>
        (await metric(api, 'reposcan_event_streams_open')) === 0 &&
        (await metric(api, 'reposcan_state_watchers')) === 0,
    );
  });

  it('streams of different scans get their own scan only, and a client that leaves frees its stream', async () => {
    const [a, b] = [await submitQueued(api), await submitQueued(api)];
    const onA = await openStream(eventsUrl(api, a));
    const onB = await openStream(eventsUrl(api, b));
    await Promise.all([onA.waitFor(1), onB.waitFor(1)]);
    expect(await metric(api, 'reposcan_state_watchers')).toBe(2);

    onB.close();
    await until(
      'the stream of the client that left is released',
      async () =>
        (await metric(api, 'reposcan_event_streams_open')) === 1 &&
        (await metric(api, 'reposcan_state_watchers')) === 1,
    );
    await api.runtime.store.updateState(a, (r) => ({
      ...r,
      state: 'running',
      attempt: 1,
      started_at: new Date().toISOString(),
    }));
    await onA.waitFor(2);
    expect(story(onA)).toEqual(['state:queued', 'state:running']);
    expect(story(onB)).toEqual(['state:queued']);
    onA.close();
    await until('all released', async () => (await metric(api, 'reposcan_event_streams_open')) === 0);
  });

  it('a scan deleted while watched ends its streams with a cancelled state', async () => {
    const scanId = await submitQueued(api);
    const stream = await openStream(eventsUrl(api, scanId));
    await stream.waitFor(1);
    await sleep(20); // so a stale updated_at shows
    const deleting = Date.now();
    const response = await fetch(`${api.baseUrl}/v1/cleanup/${scanId}`, { method: 'DELETE' });
    expect(response.status).toBe(200);
    expect(await stream.ended).toEqual({ byServer: true });
    expect(story(stream).at(-1)).toBe('state:cancelled');
    // A change of state moves updated_at forward; the terminal one is as of the deletion.
    const [first, last] = [stream.events.at(0), stream.events.at(-1)].map(
      (e) => e?.data as { updated_at: string; completed_at: string | null },
    );
    expect(Date.parse(last?.updated_at ?? '')).toBeGreaterThanOrEqual(deleting);
    expect(Date.parse(last?.updated_at ?? '')).toBeGreaterThan(Date.parse(first?.updated_at ?? ''));
    expect(last?.completed_at).toBe(last?.updated_at);
  });

  it('an unknown scan is a 404 and holds no stream', async () => {
    const stream = await openStream(eventsUrl(api, '00000000-0000-4000-8000-000000000000'));
    expect(stream.status).toBe(404);
    expect(stream.body?.code).toBe('SCAN_NOT_FOUND');
    expect(await metric(api, 'reposcan_event_streams_open')).toBe(0);
    expect(await metric(api, 'reposcan_state_watchers')).toBe(0);
  });
});

describe('a lost signal is caught by the slow fallback read', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi(NO_WORKER, { statePollMs: 200 });
  });
  afterAll(async () => {
    await api?.close();
  });

  it('a state written without an announcement still reaches every stream, which then closes', async () => {
    const scanId = await submitQueued(api);
    const streams = await Promise.all([1, 2, 3].map(() => openStream(eventsUrl(api, scanId))));
    await Promise.all(streams.map((s) => s.waitFor(1)));
    // Another process's write whose announcement never arrived: a store with no signals.
    const silent = new ScanStore({ dataDir: api.dataDir });
    await silent.init();
    await silent.updateState(scanId, (r) => ({ ...r, state: 'cancelled', completed_at: new Date().toISOString() }));
    for (const s of streams) {
      expect(await s.ended).toEqual({ byServer: true });
      expect(story(s)).toEqual(['state:queued', 'state:cancelled']);
    }
  });
});

describe('event stream caps', () => {
  let api: TestApi;
  // TRUST_PROXY: the client is the address the (pretend) proxy forwards, as for the rate limit.
  const clientA = { 'x-forwarded-for': '203.0.113.1' };
  const clientB = { 'x-forwarded-for': '203.0.113.2' };
  const clientC = { 'x-forwarded-for': '203.0.113.3' };
  beforeAll(async () => {
    api = await startTestApi(
      { ...NO_WORKER, TRUST_PROXY: 'true', MAX_EVENT_STREAMS_PER_CLIENT: '2', MAX_EVENT_STREAMS: '3' },
      NO_FALLBACK,
    );
  });
  afterAll(async () => {
    await api?.close();
  });

  function expectRefused(stream: LiveStream, status: number, code: string): void {
    expect({ status: stream.status, code: stream.body?.code }).toEqual({ status, code });
    expect(Number(stream.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(stream.body?.detail).toMatch(/MAX_EVENT_STREAMS/);
  }

  it('a client over its cap gets 429, anyone over the process cap 503, and closing streams frees their places', async () => {
    const scanId = await submitQueued(api);
    const url = eventsUrl(api, scanId);
    const a1 = await openStream(url, clientA);
    const a2 = await openStream(url, clientA);
    expect([a1.status, a2.status]).toEqual([200, 200]);
    expectRefused(await openStream(url, clientA), 429, 'TOO_MANY_EVENT_STREAMS');

    const b1 = await openStream(url, clientB);
    expect(b1.status).toBe(200);
    // Three open: B is within its own cap, but the process is full.
    expectRefused(await openStream(url, clientB), 503, 'EVENT_STREAMS_FULL');
    expectRefused(await openStream(url, clientC), 503, 'EVENT_STREAMS_FULL');
    expect(await metric(api, 'reposcan_event_streams_open')).toBe(3);

    a1.close();
    await until('A’s closed stream is released', async () => (await metric(api, 'reposcan_event_streams_open')) === 2);
    const c1 = await openStream(url, clientC);
    expect(c1.status).toBe(200);
    expectRefused(await openStream(url, clientA), 503, 'EVENT_STREAMS_FULL');

    // The scan ends: every stream closes and every place is free again.
    await api.runtime.store.updateState(scanId, (r) => ({
      ...r,
      state: 'cancelled',
      completed_at: new Date().toISOString(),
    }));
    for (const s of [a2, b1, c1]) expect(await s.ended).toEqual({ byServer: true });
    await until('every place is free', async () => (await metric(api, 'reposcan_event_streams_open')) === 0);
    const other = await submitQueued(api);
    const again = await Promise.all([clientA, clientA, clientB].map((h) => openStream(eventsUrl(api, other), h)));
    expect(again.map((s) => s.status)).toEqual([200, 200, 200]);
    for (const s of again) s.close();
    await until('every place is free', async () => (await metric(api, 'reposcan_event_streams_open')) === 0);
  });

  it('refusals for an unknown scan or a bad id take no place', async () => {
    for (let i = 0; i < 4; i++) {
      expect((await openStream(eventsUrl(api, '00000000-0000-4000-8000-000000000000'), clientC)).status).toBe(404);
      expect((await openStream(eventsUrl(api, 'not-a-scan'), clientC)).status).toBe(400);
    }
    await until('no place is held', async () => (await metric(api, 'reposcan_event_streams_open')) === 0);
    const scanId = await submitQueued(api);
    const streams = await Promise.all([1, 2].map(() => openStream(eventsUrl(api, scanId), clientC)));
    expect(streams.map((s) => s.status)).toEqual([200, 200]);
    for (const s of streams) s.close();
  });
});

describe('shutting down', () => {
  it('ends the open streams, so closing the API is not held up until their scans end', async () => {
    const api = await startTestApi(NO_WORKER, NO_FALLBACK);
    try {
      const scanId = await submitQueued(api);
      const streams = await Promise.all([1, 2].map(() => openStream(eventsUrl(api, scanId))));
      await Promise.all(streams.map((s) => s.waitFor(1)));
      await api.runtime.close();
      for (const s of streams) expect(await s.ended).toEqual({ byServer: true });
    } finally {
      await api.close();
    }
  });
});

describe('a whole scan on the event stream', () => {
  let api: TestApi;
  beforeAll(async () => {
    // Embedded: the in-process worker runs the scan for real.
    api = await startTestApi();
  });
  afterAll(async () => {
    await api?.close();
  });

  interface EventData {
    state: string;
    updated_at: string;
    completed_at: string | null;
    progress: { phase: (typeof SCAN_PHASES)[number]; files_done: number; files_total: number };
  }

  it('phases come in their documented order and counts never go back; no event is later than completed_at, and the terminal one is last', async () => {
    const repo = join(api.localRoot, 'progress-repo');
    await writeLargeTree(repo, 120, 20_000);
    const response = await postScan(api, { repo_path: repo, create_zip: true }, '?wait=false');
    expect(response.status).toBe(202);
    const scanId = ((await response.json()) as { data: { scan_id: string } }).data.scan_id;
    const stream = await openStream(eventsUrl(api, scanId));
    expect(await stream.ended).toEqual({ byServer: true });

    const events = stream.events.map((e) => ({ event: e.event, ...(e.data as EventData) }));
    const last = events.at(-1);
    expect(last).toMatchObject({ event: 'state', state: 'completed', progress: { phase: 'done' } });
    const completedAt = Date.parse(last?.completed_at ?? '');
    // Running events the stream saw: more than the first and the last, or the test proves little.
    expect(events.filter((e) => e.state === 'running').length).toBeGreaterThan(2);
    for (const [i, e] of events.entries()) {
      if (e.state === 'running') expect(e.progress.phase, `event ${i}`).not.toBe('done');
      const before = events[i - 1];
      if (!before) continue;
      const rank = (x: EventData): number => SCAN_PHASES.indexOf(x.progress.phase);
      expect(rank(e), `phase of event ${i}: ${before.progress.phase} → ${e.progress.phase}`).toBeGreaterThanOrEqual(
        rank(before),
      );
      if (rank(e) === rank(before))
        expect(e.progress.files_done, `files_done within ${e.progress.phase}`).toBeGreaterThanOrEqual(
          before.progress.files_done,
        );
      if (rank(e) === rank(before) && e.progress.phase !== 'walk')
        expect(e.progress.files_total).toBe(before.progress.files_total);
      expect(Date.parse(e.updated_at), `updated_at of event ${i}`).toBeGreaterThanOrEqual(
        Date.parse(before.updated_at),
      );
    }
    for (const e of events.slice(0, -1)) expect(Date.parse(e.updated_at)).toBeLessThanOrEqual(completedAt);
    expect(Date.parse(last?.updated_at ?? '')).toBeGreaterThanOrEqual(completedAt);
    // The summary says the same completion time as the state.
    const summary = (await (await fetch(`${api.baseUrl}/v1/summary/${scanId}`)).json()) as {
      data: { completed_at: string };
    };
    expect(summary.data.completed_at).toBe(last?.completed_at);
  });
});
