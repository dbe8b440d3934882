// A port that is taken stops a process with one line naming the variable, before anything starts:
// the API (embedded, so with its in-process worker) and a ROLE=worker process's METRICS_PORT.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiProcess } from './support/worker-processes.js';

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

let holder: Server;
let heldPort: number;
let dataDir: string;

beforeAll(async () => {
  holder = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  heldPort = (holder.address() as { port: number }).port;
  dataDir = await mkdtemp(join(tmpdir(), 'reposcan-port-'));
});

afterAll(async () => {
  await new Promise((resolve) => holder.close(resolve));
  await rm(dataDir, { recursive: true, force: true });
});

/** Runs an entry point to its exit; stdout holds the JSON log lines, stderr the error. */
function runToExit(
  entry: string,
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', '--conditions=source', entry], {
    cwd: REPO_ROOT,
    env: { ...process.env, LOG_LEVEL: 'info', HOST: '127.0.0.1', DATA_DIR: dataDir, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

function logMessages(stdout: string): string[] {
  return stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => String((JSON.parse(line) as { msg?: unknown }).msg));
}

describe('a port that is taken', () => {
  it('on a free port the embedded API does start its in-process worker (what the next test must not see)', async () => {
    const api = await startApiProcess({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, REDIS_URL: '', ROLE: 'all' });
    try {
      await api.waitForLog((line) => line.msg === 'scan worker started', 10_000);
    } finally {
      await api.stop();
    }
  });

  it('stops the embedded API with "port N is in use; set PORT", exit 1, no stack trace and no worker started', async () => {
    const { code, stdout, stderr } = await runToExit('apps/api/src/main.ts', {
      PORT: String(heldPort),
      REDIS_URL: '',
      ROLE: 'all',
    });
    expect(code).toBe(1);
    expect(stderr.trim()).toBe(
      `Invalid configuration (1 problem):\n  PORT=${heldPort}: port ${heldPort} on 127.0.0.1 is in use by another process; stop it or set PORT to a free port`,
    );
    expect(stderr).not.toMatch(/^\s+at /m);
    const messages = logMessages(stdout);
    expect(messages.some((msg) => msg.includes('starting in embedded mode'))).toBe(true);
    expect(messages).not.toContain('scan worker started');
  });

  it('stops a ROLE=worker process whose METRICS_PORT is taken before it takes any scan', async () => {
    const { code, stdout, stderr } = await runToExit('apps/worker/src/main.ts', {
      ROLE: 'worker',
      REDIS_URL,
      QUEUE_PREFIX: `test-port-${process.pid}`,
      METRICS_PORT: String(heldPort),
    });
    expect(code).toBe(1);
    expect(stderr.trim()).toBe(
      `Invalid configuration (1 problem):\n  METRICS_PORT=${heldPort}: port ${heldPort} on 127.0.0.1 is in use by another process; stop it or set METRICS_PORT to a free port`,
    );
    expect(stderr).not.toMatch(/^\s+at /m);
    expect(logMessages(stdout)).not.toContain('scan worker started');
  });
});
