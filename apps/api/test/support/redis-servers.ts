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

/** A redis-server on a free loopback port, no persistence; with `sentinel` (its config lines), a sentinel. */
export async function startRedisServer(
  args: string[] = [],
  options: { sentinel?: string[]; dir: string },
): Promise<RedisServer> {
  const port = await freePort();
  const base = ['--port', String(port), '--bind', '127.0.0.1', '--dir', options.dir];
  let argv: string[];
  if (options.sentinel) {
    // A sentinel rewrites its config file: each one needs a file of its own.
    const conf = join(options.dir, `sentinel-${port}.conf`);
    await writeFile(conf, options.sentinel.map((line) => `${line}\n`).join(''));
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
  start(args?: string[], options?: { sentinel?: string[] }): Promise<RedisServer>;
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

export interface TestCluster {
  /** host:port of every node, for REDIS_CLUSTER_NODES. */
  nodes: string;
  ports: number[];
  /** The master serving `key`'s slot, and one of its replicas. */
  shardOf(key: string): Promise<{ master: number; replica: number }>;
}

/** A Redis Cluster of three masters with a replica each, every node a private redis-server. */
export async function startCluster(group: Awaited<ReturnType<typeof redisGroup>>): Promise<TestCluster> {
  const servers: RedisServer[] = [];
  for (let i = 0; i < 6; i++)
    servers.push(
      await group.start([
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        join(group.dir, `nodes-${i}.conf`),
        '--cluster-node-timeout',
        '2000',
      ]),
    );
  const ports = servers.map((s) => s.port);
  await execFileAsync(
    'redis-cli',
    ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '1', '--cluster-yes'],
    { timeout: 60_000 },
  );
  for (const port of ports)
    await waitUntil(`cluster_state:ok on ${port}`, async () =>
      (await redisCli(port, 'CLUSTER', 'INFO')).includes('cluster_state:ok'),
    );
  return {
    nodes: ports.map((p) => `127.0.0.1:${p}`).join(','),
    ports,
    async shardOf(key) {
      const slot = Number(await redisCli(ports[0] ?? 0, 'CLUSTER', 'KEYSLOT', key));
      const lines = (await redisCli(ports[0] ?? 0, 'CLUSTER', 'NODES')).split('\n').map((l) => l.split(' '));
      const portOf = (address = ''): number => Number(/:(\d+)@/.exec(address)?.[1]);
      const master = lines.find(
        (f) =>
          f[2]?.includes('master') &&
          f.slice(8).some((range) => {
            const [from = '', to = from] = range.split('-');
            return slot >= Number(from) && slot <= Number(to);
          }),
      );
      const replica = lines.find((f) => f[3] === master?.[0]);
      if (!master || !replica) throw new Error(`no master with a replica serves slot ${slot}`);
      return { master: portOf(master[1]), replica: portOf(replica[1]) };
    },
  };
}

export const SENTINEL_MASTER_NAME = 'reposcan-test';

export interface TestSentinels {
  /** host:port of every sentinel, for REDIS_SENTINELS. */
  sentinels: string;
  master: RedisServer;
  replica: RedisServer;
  /** The port the sentinels name as master now. */
  masterPort(): Promise<number>;
}

/** A master, one replica, and three sentinels that fail over within a few seconds of the master dying. */
export async function startSentinels(group: Awaited<ReturnType<typeof redisGroup>>): Promise<TestSentinels> {
  const master = await group.start();
  const replica = await group.start(['--replicaof', '127.0.0.1', String(master.port)]);
  const conf = [
    `sentinel monitor ${SENTINEL_MASTER_NAME} 127.0.0.1 ${master.port} 2`,
    `sentinel down-after-milliseconds ${SENTINEL_MASTER_NAME} 1000`,
    `sentinel failover-timeout ${SENTINEL_MASTER_NAME} 3000`,
    `sentinel parallel-syncs ${SENTINEL_MASTER_NAME} 1`,
  ];
  const sentinels: RedisServer[] = [];
  for (let i = 0; i < 3; i++) sentinels.push(await group.start([], { sentinel: conf }));
  const first = sentinels[0]?.port ?? 0;
  for (const s of sentinels)
    await waitUntil(`sentinel ${s.port} sees the replica and its peers`, async () => {
      const replicas = await redisCli(s.port, 'SENTINEL', 'REPLICAS', SENTINEL_MASTER_NAME);
      const quorum = await redisCli(s.port, 'SENTINEL', 'CKQUORUM', SENTINEL_MASTER_NAME);
      return replicas.includes(String(replica.port)) && quorum.startsWith('OK 3');
    });
  return {
    sentinels: sentinels.map((s) => `127.0.0.1:${s.port}`).join(','),
    master,
    replica,
    async masterPort() {
      const reply = await redisCli(first, 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', SENTINEL_MASTER_NAME);
      return Number(reply.split('\n')[1]);
    },
  };
}
