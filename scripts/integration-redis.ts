// Vitest globalSetup of the integration project: the tests find Redis at REDIS_URL (default
// 127.0.0.1:6379). When nothing answers there, a private redis-server is started for the run on a
// free loopback port, without persistence, and REDIS_URL points the tests (and the API and worker
// processes they start) at it; without the binary the run stops at once with one line.
import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { connect, createServer } from 'node:net';

export const DEFAULT_TEST_REDIS_URL = 'redis://127.0.0.1:6379';

export type TestRedisPlan =
  /** The configured Redis answers: the tests use it. */
  | { action: 'use'; url: string }
  /** Nothing answers, and redis-server exists: start a private one. */
  | { action: 'start'; note: string }
  /** Nothing answers and there is nothing to start: stop the run with this line. */
  | { action: 'fail'; message: string };

/** What to do, from what was found: the configured URL, whether it answers, whether the binary exists. */
export function planTestRedis(found: { url: string; answers: boolean; hasRedisServer: boolean }): TestRedisPlan {
  const where = redactPassword(found.url);
  if (found.answers) return { action: 'use', url: found.url };
  if (found.hasRedisServer)
    return { action: 'start', note: `nothing answers at ${where}; starting a private redis-server for this run` };
  return {
    action: 'fail',
    message: `Integration tests need Redis: nothing answers at ${where} (REDIS_URL) and there is no redis-server to start a private one; install it (apt-get install redis-server, or brew install redis) or set REDIS_URL to a running Redis.`,
  };
}

export function redactPassword(url: string): string {
  return url.replace(/\/\/([^/@]*):[^/@]*@/, '//$1:***@');
}

export function hasRedisServerBinary(): boolean {
  return spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0;
}

/**
 * True when a Redis at `url` answers PING within a second (an error reply such as NOAUTH counts:
 * something is there, and the tests will say what is wrong with it). A plain socket, so that
 * packages/queue stays the only importer of ioredis; a TLS URL is taken as answering.
 */
export function redisAnswers(url: string): Promise<boolean> {
  const parsed = new URL(url);
  if (parsed.protocol === 'rediss:') return Promise.resolve(true);
  return new Promise((resolve) => {
    const socket = connect({
      host: parsed.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1',
      port: Number(parsed.port || 6379),
    });
    const done = (answers: boolean): void => {
      socket.destroy();
      resolve(answers);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (reply: Buffer) => done(/^[+-]/.test(reply.toString('latin1'))));
  });
}

async function freeLoopbackPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function startPrivateRedis(): Promise<{ url: string; child: ChildProcess }> {
  const port = await freeLoopbackPort();
  const child = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--maxmemory-policy',
      'noeviction',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  // Never outlives the run, even when vitest is killed before its teardown.
  const kill = (): void => void child.kill('SIGKILL');
  process.once('exit', kill);
  child.once('exit', () => process.off('exit', kill));
  const url = `redis://127.0.0.1:${port}`;
  const deadline = Date.now() + 10_000;
  while (!(await redisAnswers(url))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(
        `the private redis-server did not start on port ${port}: ${output.trim().split('\n').pop() ?? ''}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { url, child };
}

export default async function setup(): Promise<(() => Promise<void>) | undefined> {
  const url = process.env.REDIS_URL || DEFAULT_TEST_REDIS_URL;
  const plan = planTestRedis({ url, answers: await redisAnswers(url), hasRedisServer: hasRedisServerBinary() });
  if (plan.action === 'use') return undefined;
  if (plan.action === 'fail') {
    // One line, not a stack: the fix is to install something.
    console.error(plan.message);
    process.exit(1);
  }
  console.log(plan.note);
  const redis = await startPrivateRedis();
  process.env.REDIS_URL = redis.url;
  return async () => {
    if (redis.child.exitCode !== null) return;
    const exited = once(redis.child, 'exit');
    redis.child.kill('SIGTERM');
    await exited;
  };
}
