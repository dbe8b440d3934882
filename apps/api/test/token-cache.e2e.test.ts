// The shared token cache seen from outside: a rescan counts nothing again yet answers byte for
// byte what the first scan did, another worker process on the same volume benefits too, and a
// changed file is the only one counted again. Real API, real worker processes, real Redis.
import { randomUUID } from 'node:crypto';
import { access, appendFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { purgeQueuePrefix } from '@reposcan/queue';
import { hasRedisServer } from '../../../packages/queue/test/support/private-redis.js';
import { sample, scrape } from './support/prometheus.js';
import { postScan, waitCompleted } from './support/scenarios.js';
import { startTestApi } from './support/test-runtime.js';
import type { TestApi } from './support/test-runtime.js';
import { startWorkerProcess } from './support/worker-processes.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

interface Completed {
  scanId: string;
  artifacts: Record<string, string>;
  tokens: number;
}

/** Scans `repoPath` to the end; returns the artifacts' sha256 by format and the token total. */
async function scan(api: TestApi, repoPath: string): Promise<Completed> {
  const response = await postScan(api, { repo_path: repoPath, create_zip: false }, '?wait=false');
  expect(response.status).toBe(202);
  const scanId = ((await response.json()) as { data: { scan_id: string } }).data.scan_id;
  const status = (await waitCompleted(api, scanId)) as {
    state: string;
    result: { artifacts: Record<string, { sha256: string }> };
  };
  expect(status.state).toBe('completed');
  const summary = (
    (await (await fetch(`${api.baseUrl}/v1/summary/${scanId}`)).json()) as {
      data: { summary: { estimated_tokens: number } };
    }
  ).data.summary;
  return {
    scanId,
    artifacts: Object.fromEntries(Object.entries(status.result.artifacts).map(([format, a]) => [format, a.sha256])),
    tokens: summary.estimated_tokens,
  };
}

const lookups = async (baseUrl: string): Promise<{ hit: number; miss: number }> => {
  const text = await scrape(baseUrl);
  return {
    hit: sample(text, 'reposcan_token_cache_lookups_total', { result: 'hit' }) ?? 0,
    miss: sample(text, 'reposcan_token_cache_lookups_total', { result: 'miss' }) ?? 0,
  };
};

describe('shared token cache', () => {
  it('a rescan counts no file again and writes the same artifacts byte for byte; a changed file is the only one counted', async () => {
    const api = await startTestApi();
    cleanups.push(() => api.close());
    const cold = await scan(api, api.repoDir);
    const first = await lookups(api.baseUrl);
    expect(first.hit).toBe(0);
    expect(first.miss).toBeGreaterThan(5);

    const warm = await scan(api, api.repoDir);
    expect(warm.artifacts).toEqual(cold.artifacts);
    expect(warm.tokens).toBe(cold.tokens);
    expect(await lookups(api.baseUrl)).toEqual({ hit: first.miss, miss: first.miss });

    await appendFile(join(api.repoDir, 'README.md'), '\nOne more line, a few more tokens.\n');
    const changed = await scan(api, api.repoDir);
    expect(changed.tokens).toBeGreaterThan(cold.tokens);
    expect(await lookups(api.baseUrl)).toEqual({ hit: 2 * first.miss - 1, miss: first.miss + 1 });
  });

  it('TOKEN_CACHE_MAX_ENTRIES=0 turns it off: nothing is looked up and nothing is written', async () => {
    const api = await startTestApi({ TOKEN_CACHE_MAX_ENTRIES: '0' });
    cleanups.push(() => api.close());
    const cold = await scan(api, api.repoDir);
    expect((await scan(api, api.repoDir)).artifacts).toEqual(cold.artifacts);
    expect(await lookups(api.baseUrl)).toEqual({ hit: 0, miss: 0 });
    await expect(access(join(api.dataDir, 'token-cache'))).rejects.toThrow();
  });

  it.runIf(hasRedisServer)(
    'what one worker process counted, another one on the same volume does not count again',
    async () => {
      const prefix = `reposcan-cache-${randomUUID().slice(0, 8)}`;
      const api = await startTestApi({ REDIS_URL, ROLE: 'api', QUEUE_PREFIX: prefix, SCAN_WAIT_SECONDS: '0' });
      cleanups.push(
        () => api.close(),
        () => purgeQueuePrefix(REDIS_URL, prefix),
      );
      const env = {
        REDIS_URL,
        ROLE: 'worker',
        QUEUE_PREFIX: prefix,
        DATA_DIR: api.dataDir,
        ALLOWED_LOCAL_ROOTS: api.localRoot,
        WORKER_CONCURRENCY: '1',
      };

      const first = await startWorkerProcess(env);
      cleanups.push(() => first.stop('SIGKILL'));
      const cold = await scan(api, api.repoDir);
      const coldLog = await first.waitForLog((line) => line.msg === 'scan completed' && line.scanId === cold.scanId);
      expect(coldLog.cacheHits).toBe(0);
      expect(await first.stop('SIGTERM')).toBe(0);

      const second = await startWorkerProcess(env);
      cleanups.push(() => second.stop('SIGKILL'));
      const warm = await scan(api, api.repoDir);
      expect(warm.artifacts).toEqual(cold.artifacts);
      const warmLog = await second.waitForLog((line) => line.msg === 'scan completed' && line.scanId === warm.scanId);
      expect(warmLog.cacheHits).toBeGreaterThan(5);
    },
  );
});
