// A worker's /ready on METRICS_PORT: the API's answer (ReadyResponse) with the worker's own check,
// each failed check a reason with a code and what to do. The queue and the volume are stand-ins.
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import type { ScanQueue } from '@reposcan/queue';
import { serveWorkerHttp } from '../src/serve-worker-http.js';
import type { WorkerHttp } from '../src/serve-worker-http.js';

const servers: WorkerHttp[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function ready(state: {
  stopping: boolean;
  disk: { writable: boolean; freeRatio: number } | null;
}): Promise<{ status: number; body: unknown }> {
  const queue = { checkWrites: () => Promise.resolve(null) } as unknown as ScanQueue;
  const server = await serveWorkerHttp({
    host: '127.0.0.1',
    port: 0,
    version: '0.0.0',
    registry: new Registry(),
    queue,
    stopping: () => state.stopping,
    diskStatus: () => Promise.resolve(state.disk),
    minFreeDiskRatio: 0.05,
  });
  servers.push(server);
  const response = await fetch(`http://127.0.0.1:${server.port}/ready`);
  return { status: response.status, body: await response.json() };
}

describe("a worker's /ready", () => {
  it('is ready with every check ok', async () => {
    expect(await ready({ stopping: false, disk: { writable: true, freeRatio: 0.5 } })).toEqual({
      status: 200,
      body: { status: 'ready', checks: { redis: 'ok', volume: 'ok', worker: 'ok' }, reasons: [] },
    });
  });

  it('says why it is not ready: stopping after SIGTERM, and a volume it cannot use', async () => {
    const stopping = await ready({ stopping: true, disk: { writable: true, freeRatio: 0.5 } });
    expect(stopping).toMatchObject({
      status: 503,
      body: {
        status: 'not_ready',
        checks: { redis: 'ok', volume: 'ok', worker: 'stopping' },
        reasons: [{ code: 'WORKER_STOPPING', message: expect.stringMatching(/SIGTERM.*other workers take the work/) }],
      },
    });
    const full = await ready({ stopping: false, disk: { writable: true, freeRatio: 0.01 } });
    expect(full).toMatchObject({
      status: 503,
      body: { checks: { volume: 'low_space' }, reasons: [{ code: 'VOLUME_LOW_SPACE' }] },
    });
    // Before the scan store is open, the volume is not known to be usable.
    expect(await ready({ stopping: false, disk: null })).toMatchObject({
      status: 503,
      body: { checks: { volume: 'not_writable' }, reasons: [{ code: 'VOLUME_NOT_WRITABLE' }] },
    });
  });
});
