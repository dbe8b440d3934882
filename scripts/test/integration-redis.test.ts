import { describe, expect, it } from 'vitest';
import { planTestRedis } from '../integration-redis.js';

describe('the integration tests find their Redis', () => {
  const url = 'redis://127.0.0.1:6379';

  it('use the configured Redis when it answers, whether or not redis-server exists', () => {
    expect(planTestRedis({ url, answers: true, hasRedisServer: true })).toEqual({ action: 'use', url });
    expect(planTestRedis({ url, answers: true, hasRedisServer: false })).toEqual({ action: 'use', url });
  });

  it('start a private redis-server when nothing answers and the binary exists', () => {
    expect(planTestRedis({ url, answers: false, hasRedisServer: true })).toEqual({
      action: 'start',
      note: 'nothing answers at redis://127.0.0.1:6379; starting a private redis-server for this run',
    });
  });

  it('stop with one line saying how to get it when there is nothing to start', () => {
    const plan = planTestRedis({ url, answers: false, hasRedisServer: false });
    expect(plan.action).toBe('fail');
    const message = plan.action === 'fail' ? plan.message : '';
    expect(message).not.toContain('\n');
    expect(message).toContain('nothing answers at redis://127.0.0.1:6379');
    expect(message).toContain('apt-get install redis-server');
  });

  it('never print a password from REDIS_URL', () => {
    const plan = planTestRedis({
      url: 'redis://user:s3cret@redis.internal:6380/2',
      answers: false,
      hasRedisServer: false,
    });
    expect(JSON.stringify(plan)).not.toContain('s3cret');
    expect(JSON.stringify(plan)).toContain('redis://user:***@redis.internal:6380/2');
  });
});
