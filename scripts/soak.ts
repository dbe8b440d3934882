// Mixed traffic for a set time, then a count of what became of every accepted scan:
// accepted / completed / failed / cancelled by us / lost (lost must be 0; exit 1 otherwise).
//
//   npm run soak -- [--seconds 120] [--rate 4] [--workers 2] [--chaos 20] [--server URL --root DIR]
//
// Without --server it starts its own stack from the sources: an API and --workers worker
// processes on the Redis at REDIS_URL (default 127.0.0.1:6379) under a fresh queue prefix, with
// a throwaway DATA_DIR. --chaos N kills a random worker with SIGKILL every N seconds and starts
// a new one, as a crashing host would. Against --server, --root must be a folder inside that
// server's ALLOWED_LOCAL_ROOTS holding repositories to scan.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { ZipArchive } from 'archiver';
import { purgeQueuePrefix } from '@reposcan/queue';

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '120' },
    rate: { type: 'string', default: '4' },
    workers: { type: 'string', default: '2' },
    chaos: { type: 'string' },
    drain: { type: 'string', default: '180' },
    server: { type: 'string' },
    root: { type: 'string' },
  },
});
const seconds = Number(args.seconds);
const rate = Number(args.rate);
const ROOT = fileURLToPath(new URL('../', import.meta.url));
const SAMPLE = join(ROOT, 'packages/core/test/fixtures/sample-repo');

const processes = new Set<ChildProcess>();
function start(entry: string, env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', '--conditions=source', entry], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: 'ignore',
  });
  processes.add(child);
  child.once('exit', () => processes.delete(child));
  return child;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no free port');
  return address.port;
}

async function zipOf(folder: string): Promise<Buffer> {
  const zip = new ZipArchive({ zlib: { level: 6 } });
  const chunks: Buffer[] = [];
  zip.on('data', (chunk: Buffer) => chunks.push(chunk));
  zip.directory(folder, 'soak-repo');
  await zip.finalize();
  return Buffer.concat(chunks);
}

let base = '';
let serverUrl = args.server ?? '';
let repoRoot = args.root ?? '';
const workers: ChildProcess[] = [];
let workerEnv: Record<string, string> = {};
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const queuePrefix = `reposcan-soak-${process.pid}`;

if (!args.server) {
  base = await mkdtemp(join(tmpdir(), 'reposcan-soak-'));
  repoRoot = join(base, 'repos');
  await cp(SAMPLE, join(repoRoot, 'sample'), { recursive: true });
  await cp(join(ROOT, 'packages/core/src'), join(repoRoot, 'core-src'), { recursive: true });
  const port = await freePort();
  const env = {
    REDIS_URL: redisUrl,
    QUEUE_PREFIX: queuePrefix,
    DATA_DIR: join(base, 'data'),
    ALLOWED_LOCAL_ROOTS: repoRoot,
    JOB_LOCK_SECONDS: '5',
    JANITOR_INTERVAL_SECONDS: '5',
  };
  start('apps/api/src/main.ts', {
    ...env,
    ROLE: 'api',
    HOST: '127.0.0.1',
    PORT: String(port),
    SCAN_WAIT_SECONDS: '0',
    RATE_LIMIT_PER_MINUTE: '0',
    INSPECT_RATE_LIMIT_PER_MINUTE: '0',
  });
  workerEnv = { ...env, ROLE: 'worker' };
  for (let i = 0; i < Number(args.workers); i++) workers.push(start('apps/worker/src/main.ts', workerEnv));
  serverUrl = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (
      await fetch(`${serverUrl}/ready`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
    if (i > 300) throw new Error('the API did not become ready');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
if (!repoRoot) throw new Error('--root is required with --server');
const repos = args.server ? [repoRoot] : [join(repoRoot, 'sample'), join(repoRoot, 'core-src')];
const zip = await zipOf(repos[0] ?? SAMPLE);

const statuses = new Map<string, number>();
const accepted = new Set<string>();
const cleanedUp = new Set<string>();
let crashes = 0;
const count = (key: string): void => void statuses.set(key, (statuses.get(key) ?? 0) + 1);

async function oneRequest(): Promise<void> {
  const roll = Math.random();
  try {
    if (roll < 0.6) {
      const repo = repos[Math.floor(Math.random() * repos.length)] ?? SAMPLE;
      const response = await fetch(`${serverUrl}/v1/scan?wait=false`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ repo_path: repo, create_zip: Math.random() < 0.3 }),
      });
      count(`scan ${response.status}`);
      const body = (await response.json()) as { data?: { scan_id?: string } };
      if (response.status === 202 && body.data?.scan_id) accepted.add(body.data.scan_id);
    } else if (roll < 0.8) {
      const form = new FormData();
      form.append('file', new Blob([new Uint8Array(zip)]), 'soak.zip');
      const response = await fetch(`${serverUrl}/v1/upload?wait=false`, { method: 'POST', body: form });
      count(`upload ${response.status}`);
      const body = (await response.json()) as { data?: { scan_id?: string } };
      if (response.status === 202 && body.data?.scan_id) accepted.add(body.data.scan_id);
    } else if (roll < 0.9) {
      const response = await fetch(`${serverUrl}/v1/inspect`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ repo_path: repos[0] }),
      });
      count(`inspect ${response.status}`);
      await response.arrayBuffer();
    } else {
      const victim = [...accepted].filter((id) => !cleanedUp.has(id))[Math.floor(Math.random() * accepted.size)];
      if (!victim) return;
      cleanedUp.add(victim);
      const response = await fetch(`${serverUrl}/v1/cleanup/${victim}`, { method: 'DELETE' });
      count(`cleanup ${response.status}`);
      await response.arrayBuffer();
    }
  } catch (error) {
    count(`error ${(error as Error).message.slice(0, 40)}`);
  }
}

const chaos =
  args.chaos && !args.server
    ? setInterval(
        () => {
          const victim = workers.splice(Math.floor(Math.random() * workers.length), 1)[0];
          victim?.kill('SIGKILL');
          crashes++;
          workers.push(start('apps/worker/src/main.ts', workerEnv));
        },
        Number(args.chaos) * 1000,
      )
    : undefined;

const line = (text: string): void => void process.stderr.write(process.stderr.isTTY ? `\r\x1b[2K${text}` : `${text}\n`);
const startedAt = Date.now();
const inFlight = new Set<Promise<void>>();
while (Date.now() - startedAt < seconds * 1000) {
  const request = oneRequest().finally(() => inFlight.delete(request));
  inFlight.add(request);
  const elapsed = Math.round((Date.now() - startedAt) / 1000);
  if (process.stderr.isTTY || elapsed % 10 === 0)
    line(`traffic ${elapsed}/${seconds} s · accepted ${accepted.size} · worker kills ${crashes}`);
  await new Promise((resolve) => setTimeout(resolve, 1000 / rate));
}
clearInterval(chaos);
await Promise.allSettled([...inFlight]);

// Drain: every accepted scan must end completed, failed or (when we deleted it) gone.
const outcome = new Map<string, string>();
const drainUntil = Date.now() + Number(args.drain) * 1000;
while (Date.now() < drainUntil) {
  for (const id of accepted) {
    if (outcome.has(id)) continue;
    const response = await fetch(`${serverUrl}/v1/scans/${id}`).catch(() => null);
    if (response === null) continue;
    if (response.status === 404) {
      if (cleanedUp.has(id)) outcome.set(id, 'deleted');
      continue;
    }
    const body = (await response.json()) as { data: { state: string; error?: { code: string } | null } };
    if (body.data.state === 'completed') outcome.set(id, 'completed');
    else if (body.data.state === 'failed') outcome.set(id, `failed ${body.data.error?.code ?? ''}`);
    else if (body.data.state === 'cancelled' && cleanedUp.has(id)) outcome.set(id, 'deleted');
  }
  line(`draining · ${outcome.size}/${accepted.size} accepted scans ended`);
  if (outcome.size === accepted.size) break;
  await new Promise((resolve) => setTimeout(resolve, 1000));
}
if (process.stderr.isTTY) process.stderr.write('\n');

const tally = new Map<string, number>();
for (const value of outcome.values()) tally.set(value, (tally.get(value) ?? 0) + 1);
const lost = accepted.size - outcome.size;
console.log(
  `\nsoak: ${seconds} s at ${rate} req/s, ${args.server ? `server ${serverUrl}` : `${args.workers} workers`}${args.chaos ? `, a worker killed every ${args.chaos} s (${crashes} kills)` : ''}`,
);
console.log('requests:', Object.fromEntries([...statuses].sort()));
console.log(
  `accepted ${accepted.size} · completed ${tally.get('completed') ?? 0} · failed ${[...tally].filter(([k]) => k.startsWith('failed')).reduce((s, [, n]) => s + n, 0)} · deleted by us ${tally.get('deleted') ?? 0} · lost ${lost}`,
);
for (const [key, n] of tally) if (key.startsWith('failed')) console.log(`  ${key}: ${n}`);

for (const child of processes) child.kill('SIGTERM');
await new Promise((resolve) => setTimeout(resolve, 2000));
for (const child of processes) child.kill('SIGKILL');
if (base) {
  await purgeQueuePrefix(redisUrl, queuePrefix);
  await rm(base, { recursive: true, force: true });
}
process.exit(lost === 0 ? 0 : 1);
