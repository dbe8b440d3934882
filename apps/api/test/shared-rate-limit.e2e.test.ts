// In Redis mode the per-client rate limit is the deployment's, not each API process's: two API
// processes on one Redis with RATE_LIMIT_PER_MINUTE=N accept N of a client's scans in total.
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { purgeQueuePrefix } from '@reposcan/queue';
import { freePort } from '../../../packages/queue/test/support/redis.js';
import { startApiProcess } from './support/worker-processes.js';
import type { ServiceProcess } from './support/worker-processes.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const LIMIT = 4;

describe('rate limits in Redis mode', () => {
  const prefix = `reposcan-rate-${randomUUID().slice(0, 8)}`;
  let base: string;
  let repo: string;
  const apis: Array<{ process: ServiceProcess; url: string }> = [];

  beforeAll(async () => {
    base = await mkdtemp(join(tmpdir(), 'reposcan-rate-'));
    repo = join(base, 'repos', 'demo');
    await mkdir(repo, { recursive: true });
    await writeFile(join(repo, 'README.md'), '# demo\n');
    for (let i = 0; i < 2; i++) {
      const port = await freePort();
      const process = await startApiProcess({
        REDIS_URL,
        ROLE: 'api',
        QUEUE_PREFIX: prefix,
        HOST: '127.0.0.1',
        PORT: String(port),
        DATA_DIR: join(base, 'data'),
        ALLOWED_LOCAL_ROOTS: join(base, 'repos'),
        RATE_LIMIT_PER_MINUTE: String(LIMIT),
        SCAN_WAIT_SECONDS: '0',
      });
      apis.push({ process, url: `http://127.0.0.1:${port}` });
    }
  });
  afterAll(async () => {
    await Promise.all(apis.map((api) => api.process.stop()));
    await purgeQueuePrefix(REDIS_URL, prefix);
    await rm(base, { recursive: true, force: true });
  });

  it(`two API processes with RATE_LIMIT_PER_MINUTE=${LIMIT} accept ${LIMIT} of one client's scans in total`, async () => {
    const answers: Array<{ status: number; retryAfter: string | null }> = [];
    for (let i = 0; i < 3 * LIMIT; i++) {
      const api = apis[i % 2];
      const response = await fetch(`${api?.url}/v1/scan?wait=false`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ repo_path: repo }),
      });
      answers.push({ status: response.status, retryAfter: response.headers.get('retry-after') });
      await response.body?.cancel();
    }
    expect(answers.filter((a) => a.status === 202)).toHaveLength(LIMIT);
    const refused = answers.filter((a) => a.status !== 202);
    expect(refused).toHaveLength(2 * LIMIT);
    for (const answer of refused) {
      expect(answer.status).toBe(429);
      expect(Number(answer.retryAfter)).toBeGreaterThan(0);
    }
  });
});
