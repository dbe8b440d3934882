import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { Redis } from 'ioredis';
import { waitFor } from './async.js';
import { freePort } from './redis.js';

/** True when a redis-server binary is on PATH, for the tests that must stop and restart Redis. */
export const hasRedisServer = spawnSync('redis-server', ['--version']).status === 0;

/**
 * A throwaway redis-server on its own port, so a test can take Redis down and bring it back
 * without touching the shared instance other test files use.
 */
export class PrivateRedis {
  private process: ChildProcess | undefined;
  private constructor(
    readonly port: number,
    /** With a folder, Redis keeps an append-only file there, as production does, and reloads it on `up()`. */
    private readonly appendOnlyDir?: string,
  ) {}

  static async start(options: { appendOnlyDir?: string } = {}): Promise<PrivateRedis> {
    const redis = new PrivateRedis(await freePort(), options.appendOnlyDir);
    await redis.up();
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  private get running(): boolean {
    return this.process !== undefined && this.process.exitCode === null && this.process.signalCode === null;
  }

  async up(): Promise<void> {
    if (this.running) return;
    const persistence =
      this.appendOnlyDir === undefined
        ? ['--appendonly', 'no']
        : ['--appendonly', 'yes', '--appendfsync', 'always', '--dir', this.appendOnlyDir];
    const child = spawn(
      'redis-server',
      [
        '--port',
        String(this.port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--maxmemory-policy',
        'noeviction',
        ...persistence,
      ],
      { stdio: 'ignore' },
    );
    process.once('exit', () => child.kill('SIGKILL')); // never outlive the test process
    this.process = child;
    await waitFor('private redis-server', () => this.ping(), 5_000);
  }

  async down(): Promise<void> {
    const child = this.process;
    if (!child || !this.running) return;
    child.kill('SIGKILL');
    await once(child, 'exit');
  }

  private async ping(): Promise<boolean> {
    const client = new Redis(this.url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    client.on('error', () => {});
    try {
      await client.connect();
      return (await client.ping()) === 'PONG';
    } catch {
      return false;
    } finally {
      client.disconnect();
    }
  }
}
