// GET /ready tells the truth: ready means a scan could be queued now. Each test gives the API a
// private redis-server in a state that refuses writes, as operators meet them, and reads the reason.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { hasRedisServer } from '../../../packages/queue/test/support/private-redis.js';
import { postScan } from './support/scenarios.js';
import { redisCli, redisGroup } from './support/redis-servers.js';
import type { RedisServer } from './support/redis-servers.js';
import { startTestApi } from './support/test-runtime.js';
import type { TestApi } from './support/test-runtime.js';

interface Ready {
  status: string;
  checks: { redis: string; volume: string };
  reasons: Array<{ code: string; message: string }>;
}

async function ready(api: TestApi): Promise<{ status: number; body: Ready }> {
  const response = await fetch(`${api.baseUrl}/ready`);
  return { status: response.status, body: (await response.json()) as Ready };
}

describe.skipIf(!hasRedisServer)('GET /ready with Redis', () => {
  let group: Awaited<ReturnType<typeof redisGroup>>;
  let redis: RedisServer;
  const apis: TestApi[] = [];
  const apiOn = async (port: number): Promise<TestApi> => {
    const api = await startTestApi({ REDIS_URL: `redis://127.0.0.1:${port}`, ROLE: 'api', SCAN_WAIT_SECONDS: '0' });
    apis.push(api);
    return api;
  };

  beforeAll(async () => {
    group = await redisGroup();
  });
  afterEach(async () => {
    for (const api of apis.splice(0)) await api.close();
    await redis.stop();
  });
  afterAll(async () => {
    await group.stopAll();
  });

  it('is 200 with no reasons on a healthy Redis, and 503 REDIS_UNREACHABLE once it is gone', async () => {
    redis = await group.start();
    const api = await apiOn(redis.port);
    expect(await ready(api)).toEqual({
      status: 200,
      body: { status: 'ready', checks: { redis: 'ok', volume: 'ok' }, reasons: [] },
    });
    await redis.stop();
    const down = await ready(api);
    expect(down.status).toBe(503);
    expect(down.body.checks.redis).toBe('down');
    expect(down.body.reasons.map((r) => r.code)).toEqual(['REDIS_UNREACHABLE']);
  });

  it('is 503 REDIS_READ_ONLY on a read-only replica, like a submit, and 200 once it is promoted', async () => {
    const master = await group.start();
    redis = await group.start();
    await redisCli(redis.port, 'REPLICAOF', '127.0.0.1', String(master.port));
    const api = await apiOn(redis.port);
    const refused = await ready(api);
    expect(refused.status).toBe(503);
    expect(refused.body.checks.redis).toBe('refuses_writes');
    expect(refused.body.reasons).toEqual([
      { code: 'REDIS_READ_ONLY', message: expect.stringMatching(/read-only replica/) },
    ]);
    // What /ready predicts is what a client meets.
    expect((await postScan(api, { repo_path: api.repoDir })).status).toBe(503);

    await redisCli(redis.port, 'REPLICAOF', 'NO', 'ONE');
    expect((await ready(api)).status).toBe(200);
    expect((await postScan(api, { repo_path: api.repoDir })).status).toBe(202);
    await master.stop();
  });

  it('is 503 REDIS_OUT_OF_MEMORY when maxmemory is reached under noeviction, and 200 once there is room', async () => {
    redis = await group.start();
    const api = await apiOn(redis.port);
    expect((await ready(api)).status).toBe(200);
    // About 2 MB of data, then a limit of 1 MB: every write that needs memory is refused.
    await redisCli(redis.port, 'EVAL', "for i=1,2000 do redis.call('SET','filler:'..i,string.rep('x',1000)) end", '0');
    await redisCli(redis.port, 'CONFIG', 'SET', 'maxmemory', '1mb');
    const full = await ready(api);
    expect(full.status).toBe(503);
    expect(full.body.checks.redis).toBe('refuses_writes');
    expect(full.body.reasons).toEqual([{ code: 'REDIS_OUT_OF_MEMORY', message: expect.stringMatching(/maxmemory/) }]);
    expect((await postScan(api, { repo_path: api.repoDir })).status).toBe(503);

    await redisCli(redis.port, 'CONFIG', 'SET', 'maxmemory', '0');
    expect((await ready(api)).status).toBe(200);
  });
});
