// Private redis-server processes on free loopback ports for tests that need a Redis of a given
// shape (a replica, a full one, a cluster, sentinels), driven with redis-cli as an operator would.
import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../../../packages/queue/test/support/redis.js';

const execFileAsync = promisify(execFile);

/** One redis-cli command against 127.0.0.1:`port`; resolves with its output (errors included: redis-cli exits 0 on them). */
export async function redisCli(port: number, ...args: string[]): Promise<string> {
  const { stdout } = await execFileAsync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], {
    timeout: 30_000,
  });
  return stdout.trim();
}

export async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export interface RedisServer {
  port: number;
  child: ChildProcess;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** A redis-server (or `redis-server <conf> --sentinel`) on a free loopback port, no persistence. */
export async function startRedisServer(
  args: string[] = [],
  options: { sentinel?: boolean; dir: string },
): Promise<RedisServer> {
  const port = await freePort();
  const base = ['--port', String(port), '--bind', '127.0.0.1', '--dir', options.dir];
  let argv: string[];
  if (options.sentinel) {
    // A sentinel rewrites its config file: each one needs a file of its own.
    const conf = join(options.dir, `sentinel-${port}.conf`);
    await writeFile(conf, '');
    argv = [conf, '--sentinel', ...base, ...args];
  } else {
    argv = [...base, '--save', '', '--appendonly', 'no', '--maxmemory-policy', 'noeviction', ...args];
  }
  const child = spawn('redis-server', argv, { stdio: 'ignore' });
  const kill = (): void => void child.kill('SIGKILL');
  process.once('exit', kill); // never outlive the test process
  child.once('exit', () => process.off('exit', kill));
  await waitUntil(`redis-server on ${port}`, async () => (await redisCli(port, 'PING')) === 'PONG', 10_000);
  return {
    port,
    child,
    async stop(signal = 'SIGKILL') {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill(signal);
      await exited;
    },
  };
}

/** A folder for the servers' files, and a way to stop every server started in it. */
export async function redisGroup(): Promise<{
  dir: string;
  start(args?: string[], options?: { sentinel?: boolean }): Promise<RedisServer>;
  stopAll(): Promise<void>;
}> {
  const dir = await mkdtemp(join(tmpdir(), 'reposcan-redis-'));
  const servers: RedisServer[] = [];
  return {
    dir,
    async start(args = [], options = {}) {
      const server = await startRedisServer(args, { ...options, dir });
      servers.push(server);
      return server;
    },
    async stopAll() {
      await Promise.all(servers.map((s) => s.stop()));
      await rm(dir, { recursive: true, force: true });
    },
  };
}
