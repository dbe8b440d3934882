// Private repositories through the whole service, in both deployments: real API and worker
// processes on Redis, and the embedded one (ROLE=all). A loopback git server wants HTTP basic
// credentials. After the scans, every place a credential could leak to is searched for every
// form of every credential used: the whole DATA_DIR (artifacts and the ZIP bundle's entries
// included), each process's logs, every Redis key under the test's prefix, and /metrics.
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { purgeQueuePrefix } from '@reposcan/queue';
import { freePort } from '../../../packages/queue/test/support/redis.js';
import { createFixtures } from '../../../packages/sources/test/remote/helpers/fixture-repos.js';
import type { Fixtures } from '../../../packages/sources/test/remote/helpers/fixture-repos.js';
import { startGitHttpServer } from '../../../packages/sources/test/remote/helpers/git-http-server.js';
import type { GitHttpServer } from '../../../packages/sources/test/remote/helpers/git-http-server.js';
import { waitCompleted } from './support/scenarios.js';
import { startTestApi } from './support/test-runtime.js';
import { startApiProcess, startWorkerProcess } from './support/worker-processes.js';
import type { ServiceProcess } from './support/worker-processes.js';
import { buildZip } from './support/zips.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const TOKEN = `right-${randomUUID()}`;
const WRONG = `wrong-${randomUUID()}`;
const FILE_TOKEN = `filed-${randomUUID()}`;
const CREDENTIALS_KEY = Buffer.from(randomUUID().replaceAll('-', ''), 'hex').toString('hex').repeat(2);

/** Every form of every credential the tests send or configure. */
const NEEDLES = [
  ...[TOKEN, WRONG, FILE_TOKEN].flatMap((secret) => [secret, b64(secret), b64url(secret)]),
  ...[
    `x-access-token:${TOKEN}`,
    `x-access-token:${WRONG}`,
    `file-user:${FILE_TOKEN}`,
    `x-access-token:${FILE_TOKEN}`,
  ].flatMap((pair) => [pair, b64(pair), b64url(pair)]),
];

function b64(text: string): string {
  return Buffer.from(text).toString('base64');
}
function b64url(text: string): string {
  return Buffer.from(text).toString('base64url');
}

function hitsIn(where: string, bytes: Buffer | string): string[] {
  const buffer = typeof bytes === 'string' ? Buffer.from(bytes) : bytes;
  return NEEDLES.filter((needle) => buffer.includes(needle)).map((needle) => `${where}: ${needle.slice(0, 12)}…`);
}

/** Every file under `dir`, and every entry of every ZIP among them (deflated bytes hide text). */
function volumeHits(dir: string): string[] {
  const hits: string[] = [];
  const walk = (folder: string): void => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const full = join(folder, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile()) {
        hits.push(...hitsIn(full, readFileSync(full)));
        if (entry.name.endsWith('.zip')) hits.push(...hitsIn(`${full} (entries)`, unzipAll(full)));
      }
    }
  };
  walk(dir);
  return hits;
}

function unzipAll(file: string): Buffer {
  const script =
    'import sys, zipfile\nz = zipfile.ZipFile(sys.argv[1])\nfor n in z.namelist(): sys.stdout.buffer.write(z.read(n))';
  const run = spawnSync('python3', ['-c', script, file], { maxBuffer: 512 * 1024 * 1024 });
  if (run.status !== 0) throw new Error(`could not read ${file}: ${run.stderr.toString()}`);
  return run.stdout;
}

/** Every key under `prefix`, each read by its type, and its DUMP. */
async function redisHits(prefix: string): Promise<{ hits: string[]; keys: string[] }> {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  try {
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      cursor = next;
      keys.push(...batch);
    } while (cursor !== '0');
    const hits: string[] = [];
    for (const key of keys) {
      const type = await redis.type(key);
      const value =
        type === 'string'
          ? await redis.get(key)
          : type === 'hash'
            ? JSON.stringify(await redis.hgetall(key))
            : type === 'list'
              ? JSON.stringify(await redis.lrange(key, 0, -1))
              : type === 'set'
                ? JSON.stringify(await redis.smembers(key))
                : type === 'zset'
                  ? JSON.stringify(await redis.zrange(key, 0, -1, 'WITHSCORES'))
                  : type === 'stream'
                    ? JSON.stringify(await redis.xrange(key, '-', '+'))
                    : '';
      hits.push(...hitsIn(`redis ${key} (${type})`, value ?? ''));
      const dump = await redis.dumpBuffer(key);
      if (dump) hits.push(...hitsIn(`redis DUMP ${key}`, dump));
    }
    return { hits, keys };
  } finally {
    redis.disconnect();
  }
}

interface Envelope {
  status: string;
  code?: string;
  detail?: string;
  data: Record<string, unknown> & { scan_id?: string; commit?: string; artifacts?: Record<string, { url: string }> };
}

interface Deployment {
  baseUrl: string;
  dataDir: string;
  localRoot: string;
  processes: ServiceProcess[];
  /** Every /metrics: the API's, and a separate worker's. */
  metricsUrls: string[];
  prefix: string | null;
}

let fixtures: Fixtures;
let privateGit: GitHttpServer; // wants x-access-token:<TOKEN>, as GitHub does
let operatorGit: GitHttpServer; // wants file-user:<FILE_TOKEN>, given in GIT_CREDENTIALS_FILE only
let base: string;
let credentialsFile: string;

beforeAll(async () => {
  fixtures = createFixtures();
  privateGit = await startGitHttpServer(fixtures.projectRoot, {
    auth: { username: 'x-access-token', password: TOKEN },
  });
  operatorGit = await startGitHttpServer(fixtures.projectRoot, {
    auth: { username: 'file-user', password: FILE_TOKEN },
  });
  base = await mkdtemp(join(tmpdir(), 'reposcan-private-'));
  credentialsFile = join(base, 'git-credentials');
  await writeFile(credentialsFile, `# operator's tokens\n127.0.0.1:${operatorGit.port} file-user:${FILE_TOKEN}\n`, {
    mode: 0o600,
  });
});

afterAll(async () => {
  await Promise.all([privateGit?.close(), operatorGit?.close()]);
  fixtures?.cleanup();
  await rm(base, { recursive: true, force: true });
});

const SERVICE_ENV = {
  GIT_ALLOW_HTTP: 'true',
  GIT_ALLOW_PRIVATE_HOSTS: 'true',
  GIT_ALLOWED_HOSTS: '127.0.0.1',
  SCAN_WAIT_SECONDS: '30',
  RATE_LIMIT_PER_MINUTE: '0',
  INSPECT_RATE_LIMIT_PER_MINUTE: '0',
  LOG_LEVEL: 'debug',
};

async function deploy(redis: boolean): Promise<Deployment> {
  const root = await mkdtemp(join(base, redis ? 'redis-' : 'embedded-'));
  const dataDir = join(root, 'data');
  const localRoot = join(root, 'repos');
  await mkdir(join(localRoot, 'here'), { recursive: true });
  await writeFile(join(localRoot, 'here', 'a.txt'), 'a\n');
  const port = await freePort();
  const prefix = redis ? `reposcan-creds-${randomUUID().slice(0, 8)}` : null;
  const shared = {
    ...SERVICE_ENV,
    DATA_DIR: dataDir,
    ALLOWED_LOCAL_ROOTS: localRoot,
    GIT_CREDENTIALS_FILE: credentialsFile,
    HOST: '127.0.0.1',
  };
  if (!redis) {
    const api = await startApiProcess({ ...shared, PORT: String(port), ROLE: 'all', WORKER_CONCURRENCY: '2' });
    const baseUrl = `http://127.0.0.1:${port}`;
    return { baseUrl, dataDir, localRoot, processes: [api], metricsUrls: [baseUrl], prefix };
  }
  const queue = { REDIS_URL, QUEUE_PREFIX: prefix as string, CREDENTIALS_KEY };
  const api = await startApiProcess({ ...shared, ...queue, PORT: String(port), ROLE: 'api' });
  const metricsPort = await freePort();
  const worker = await startWorkerProcess({
    ...shared,
    ...queue,
    ROLE: 'worker',
    WORKER_CONCURRENCY: '2',
    METRICS_PORT: String(metricsPort),
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  return {
    baseUrl,
    dataDir,
    localRoot,
    processes: [api, worker],
    metricsUrls: [baseUrl, `http://127.0.0.1:${metricsPort}`],
    prefix,
  };
}

async function post(
  d: Deployment,
  path: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Envelope }> {
  const response = await fetch(`${d.baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Envelope };
}

describe.each([
  ['on Redis, API and worker processes', true],
  ['embedded (ROLE=all)', false],
])('private repositories %s', (_name, redis) => {
  let d: Deployment;
  const repo = (): string => `${privateGit.origin}/acme/widgets`;

  beforeAll(async () => {
    d = await deploy(redis);
  });
  afterAll(async () => {
    await Promise.all(d?.processes.map((p) => p.stop('SIGKILL')) ?? []);
    if (d?.prefix) await purgeQueuePrefix(REDIS_URL, d.prefix);
  });

  it('the right token in the body: the scan completes, with the ZIP bundle', async () => {
    const { status, body } = await post(d, '/v1/scan', { repo_path: repo(), git_token: TOKEN, create_zip: true });
    expect(status).toBe(201);
    expect(body.data).toMatchObject({ commit: fixtures.commits.trunk, repo_name: 'widgets' });
    for (const { url } of Object.values(body.data.artifacts ?? {})) {
      const artifact = Buffer.from(await (await fetch(`${d.baseUrl}${url}`)).arrayBuffer());
      expect(hitsIn(url, artifact)).toEqual([]);
      if (url.includes('format=zip')) {
        const file = join(base, `${randomUUID()}.zip`);
        await writeFile(file, artifact);
        expect(hitsIn(`${url} (entries)`, unzipAll(file))).toEqual([]);
        expect(unzipAll(file).toString()).toContain('export const app = 1;');
      }
    }
  });

  it('user:token in the X-Git-Token header does the same', async () => {
    const { status, body } = await post(
      d,
      '/v1/scan',
      { repo_path: repo() },
      { 'X-Git-Token': `x-access-token:${TOKEN}` },
    );
    expect(status).toBe(201);
    expect(body.data.commit).toBe(fixtures.commits.trunk);
  });

  it('a wrong token, or none: the scan fails REPO_AUTH_FAILED (422), which says what to check', async () => {
    const wrong = await post(d, '/v1/scan', { repo_path: repo(), git_token: WRONG });
    expect(wrong).toMatchObject({ status: 422, body: { code: 'REPO_AUTH_FAILED' } });
    expect(wrong.body.detail).toMatch(/refused the git credential: check that the token is right/);
    const none = await post(d, '/v1/scan', { repo_path: repo() });
    expect(none).toMatchObject({ status: 422, body: { code: 'REPO_AUTH_FAILED' } });
    expect(none.body.detail).toContain('X-Git-Token');
    const state = await waitCompleted(d, String(none.body.data.scan_id));
    expect(state).toMatchObject({ state: 'failed', error: { code: 'REPO_AUTH_FAILED' } });
  });

  it("GIT_CREDENTIALS_FILE's credential clones without one in the request; a request's own wins over it", async () => {
    const filed = `${operatorGit.origin}/acme/widgets`;
    const fromFile = await post(d, '/v1/scan', { repo_path: filed });
    expect(fromFile.status).toBe(201);
    expect(fromFile.body.data.commit).toBe(fixtures.commits.trunk);
    const overridden = await post(d, '/v1/scan', { repo_path: filed, git_token: WRONG });
    expect(overridden).toMatchObject({ status: 422, body: { code: 'REPO_AUTH_FAILED' } });
  });

  it('a preview clones with the token too, and fails the same way without it', async () => {
    const ok = await post(d, '/v1/inspect', { repo_path: repo() }, { 'X-Git-Token': TOKEN });
    expect(ok.status).toBe(200);
    const refused = await post(d, '/v1/inspect', { repo_path: repo(), git_token: WRONG });
    expect(refused).toMatchObject({ status: 422, body: { code: 'REPO_AUTH_FAILED' } });
  });

  it('an upload or a local path with a token: 400 GIT_TOKEN_NOT_ACCEPTED, nothing queued', async () => {
    const zip = await buildZip(join(base, `${randomUUID()}.zip`), { 'a.txt': 'a\n' });
    const form = new FormData();
    form.append('file', new Blob([zip]), 'a.zip');
    const upload = await fetch(`${d.baseUrl}/v1/upload`, {
      method: 'POST',
      body: form,
      headers: { 'X-Git-Token': TOKEN },
    });
    expect(upload.status).toBe(400);
    expect(await upload.json()).toMatchObject({
      code: 'GIT_TOKEN_NOT_ACCEPTED',
      detail: expect.stringContaining('upload'),
    });
    const inQuery = await fetch(`${d.baseUrl}/v1/upload?git_token=${TOKEN}`, { method: 'POST', body: form });
    expect(inQuery.status).toBe(400);
    expect(await inQuery.json()).toMatchObject({ code: 'GIT_TOKEN_NOT_ACCEPTED' });
    const local = await post(d, '/v1/scan', { repo_path: join(d.localRoot, 'here'), git_token: TOKEN });
    expect(local).toMatchObject({ status: 400, body: { code: 'GIT_TOKEN_NOT_ACCEPTED' } });
    const both = await post(d, '/v1/scan', { repo_path: repo(), git_token: TOKEN }, { 'X-Git-Token': TOKEN });
    expect(both).toMatchObject({ status: 400, body: { code: 'INVALID_REQUEST' } });
  });

  it('no form of any credential is on the volume, in a log, in Redis or in /metrics', async () => {
    // The scans above have all ended; one more is caught while its sealed token waits in Redis.
    const pending = await post(d, '/v1/scan?wait=false', { repo_path: repo(), git_token: TOKEN });
    expect(pending.status).toBe(202);
    const during = d.prefix ? await redisHits(d.prefix) : { hits: [], keys: [] };
    expect(await waitCompleted(d, String(pending.body.data.scan_id))).toMatchObject({ state: 'completed' });

    expect(volumeHits(d.dataDir)).toEqual([]);
    for (const process of d.processes) {
      expect(process.logs.length).toBeGreaterThan(0);
      expect(hitsIn('log', JSON.stringify(process.logs))).toEqual([]);
      expect(hitsIn('stderr', process.stderr())).toEqual([]);
    }
    for (const url of d.metricsUrls)
      expect(hitsIn(`${url}/metrics`, await (await fetch(`${url}/metrics`)).text())).toEqual([]);
    if (d.prefix) {
      expect(during.hits).toEqual([]);
      const after = await redisHits(d.prefix);
      expect(after.keys.length).toBeGreaterThan(0);
      expect(after.hits).toEqual([]);
      // Each sealed credential was deleted once its clone was done.
      expect(after.keys.filter((key) => key.includes(':git-credential:'))).toEqual([]);
    }
  });
});

describe('on Redis without CREDENTIALS_KEY', () => {
  it('a request with a git token is refused 503 CREDENTIALS_KEY_MISSING before anything is written', async () => {
    const prefix = `reposcan-creds-${randomUUID().slice(0, 8)}`;
    const api = await startTestApi({
      REDIS_URL,
      ROLE: 'api',
      QUEUE_PREFIX: prefix,
      ...SERVICE_ENV,
      LOG_LEVEL: 'silent',
    });
    const worker = await startWorkerProcess({
      ...SERVICE_ENV,
      REDIS_URL,
      QUEUE_PREFIX: prefix,
      ROLE: 'worker',
      DATA_DIR: api.dataDir,
    });
    try {
      const body = { repo_path: `${privateGit.origin}/acme/widgets`, git_token: TOKEN };
      const refused = await post({ baseUrl: api.baseUrl } as Deployment, '/v1/scan', body);
      expect(refused).toMatchObject({ status: 503, body: { code: 'CREDENTIALS_KEY_MISSING' } });
      expect(refused.body.detail).toContain('CREDENTIALS_KEY');
      expect(readdirSync(join(api.dataDir, 'scans'))).toEqual([]);
    } finally {
      await worker.stop('SIGKILL');
      await api.close();
      await purgeQueuePrefix(REDIS_URL, prefix);
    }
  });
});
