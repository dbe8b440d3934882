// SIGTERM on a real API process while clients hold it: an open event stream gets a last event
// saying the server is stopping, and the process exits within its grace period, not when the
// followed scan ends.
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStream } from './support/live-sse.js';
import { SAMPLE_REPO } from './support/test-runtime.js';
import { startApiProcess } from './support/worker-processes.js';
import type { ServiceProcess } from './support/worker-processes.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

async function apiProcess(
  env: Record<string, string>,
): Promise<{ api: ServiceProcess; baseUrl: string; repo: string }> {
  const base = await mkdtemp(join(tmpdir(), 'reposcan-shutdown-'));
  cleanups.push(() => rm(base, { recursive: true, force: true }));
  const repo = join(base, 'repos', 'sample');
  await cp(SAMPLE_REPO, repo, { recursive: true });
  // ROLE=api without Redis: an in-memory queue nobody consumes, so a scan stays queued.
  const api = await startApiProcess({
    HOST: '127.0.0.1',
    PORT: '0',
    ROLE: 'api',
    DATA_DIR: join(base, 'data'),
    ALLOWED_LOCAL_ROOTS: join(base, 'repos'),
    RATE_LIMIT_PER_MINUTE: '0',
    ...env,
  });
  cleanups.push(() => api.stop('SIGKILL'));
  const line = api.logs.find((l) => String(l.msg).startsWith('listening on'));
  const baseUrl = String(line?.msg).slice('listening on '.length);
  return { api, baseUrl, repo };
}

describe('SIGTERM on the API', () => {
  it('an open event stream gets a last `stopping` event, a waiting submission its 202, and the process exits within the grace period', async () => {
    const { api, baseUrl, repo } = await apiProcess({ SHUTDOWN_GRACE_SECONDS: '3', SCAN_WAIT_SECONDS: '60' });
    const submitted = await fetch(`${baseUrl}/v1/scan?wait=false`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ repo_path: repo }),
    });
    expect(submitted.status).toBe(202);
    const scanId = ((await submitted.json()) as { data: { scan_id: string } }).data.scan_id;
    const stream = await openStream(`${baseUrl}/v1/scans/${scanId}/events`);
    await stream.waitFor(1);
    // A submission that waits for its result: it would hold the server for SCAN_WAIT_SECONDS.
    const waiting = fetch(`${baseUrl}/v1/scan`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ repo_path: repo }),
    }).then(
      (r) => r.status,
      () => 'connection closed',
    );
    await new Promise((resolve) => setTimeout(resolve, 200));

    const started = Date.now();
    const code = await api.stop('SIGTERM');
    const tookMs = Date.now() - started;
    expect(code).toBe(0);
    expect(tookMs).toBeLessThan(3_000 + 2_000);
    expect(await stream.ended).toEqual({ byServer: true });
    const last = stream.events.at(-1);
    expect(last?.event).toBe('stopping');
    expect(last?.data).toMatchObject({ code: 'SERVER_STOPPING', scan_id: scanId });
    expect(String((last?.data as { detail: string }).detail)).toMatch(/reconnect/i);
    // The waiting submission is answered at once: accepted, follow it elsewhere.
    expect(await waiting).toBe(202);
  });
});
