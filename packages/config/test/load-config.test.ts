import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/index.js';

/** The ConfigError a call throws (fails the test when it does not throw one). */
function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env, { version: 'test' });
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig defaults', () => {
  it('an empty environment yields every documented default', () => {
    expect(loadConfig({}, { version: '9.9.9' })).toEqual({
      version: '9.9.9',
      host: '127.0.0.1',
      port: 8000,
      dataDir: resolve('data'),
      redis: null,
      role: 'all',
      embedded: true,
      workerConcurrency: Math.max(1, availableParallelism() - 1),
      allowedLocalRoots: [],
      gitAllowedHosts: ['github.com', 'gitlab.com', 'bitbucket.org', 'codeberg.org', 'gitea.com'],
      gitAllowHttp: false,
      gitAllowPrivateHosts: false,
      gitCredentialsFile: null,
      credentialsKey: null,
      gitTokenTtlSeconds: 3600,
      corsOrigins: '*',
      scanWaitSeconds: 60,
      scanTtlHours: 24,
      tokenEncoding: 'o200k_base',
      queuePrefix: 'reposcan',
      rateLimitPerMinute: 60,
      trustProxy: false,
      logLevel: 'info',
      maxJsonBodyBytes: 64 * 1024,
      maxUploadBytes: 50 * 1024 ** 2,
      maxUncompressedBytes: 500 * 1024 ** 2,
      maxArchiveEntries: 10_000,
      maxCompressionRatio: 100,
      maxPathDepth: 50,
      maxFileBytes: 10 * 1024 ** 2,
      maxScanFiles: 50_000,
      cloneTimeoutSeconds: 120,
      cloneStallSeconds: 20,
      maxCloneBytes: 1024 ** 3,
      scanTimeoutSeconds: 600,
      walkTimeoutSeconds: 120,
      inspectTimeoutSeconds: 30,
      inspectConcurrency: 4,
      inspectRateLimitPerMinute: 240,
      maxEventStreamsPerClient: 20,
      maxEventStreams: 2000,
      maxQueuedScans: 500,
      minFreeDiskRatio: 0.05,
      jobAttempts: 3,
      jobLockSeconds: 30,
      shutdownGraceSeconds: 30,
      janitorIntervalSeconds: 60,
      enableQueueDashboard: false,
      apiKeysFile: null,
      apiKeys: [],
      protectOpsRoutes: false,
      webhookSecret: null,
      webhookAllowedHosts: '*',
      webhookAllowHttp: false,
      webhookAllowPrivateHosts: false,
      webhookTimeoutSeconds: 10,
      webhookRetryBaseMs: 2000,
      faultInjection: [],
      metricsPort: null,
      tokenCacheMaxEntries: 1_000_000,
      fileCacheDays: 7,
      workerNice: 19,
    });
  });

  it('blank values count as unset', () => {
    expect(loadConfig({ PORT: '', LOG_LEVEL: '   ', REDIS_URL: '' }, { version: 'x' })).toMatchObject({
      port: 8000,
      logLevel: 'info',
      redis: null,
      embedded: true,
    });
  });

  it('ignores variables it does not know', () => {
    expect(() => loadConfig({ PATH: '/usr/bin', REPOSCAN_PORTT: 'x' }, { version: 'x' })).not.toThrow();
  });

  it('reads the version from the root package.json unless given', () => {
    const root = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    expect(loadConfig({}).version).toBe(root.version);
  });

  it('returns a deeply frozen object', () => {
    const config = loadConfig({ ALLOWED_LOCAL_ROOTS: '/srv/repos' }, { version: 'x' });
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.allowedLocalRoots)).toBe(true);
    expect(Object.isFrozen(config.gitAllowedHosts)).toBe(true);
    expect(() => {
      (config as { port: number }).port = 1;
    }).toThrow(TypeError);
    expect(() => (config.allowedLocalRoots as string[]).push('/etc')).toThrow(TypeError);
  });
});

describe('each variable', () => {
  const cases: [Record<string, string>, Record<string, unknown>][] = [
    [{ HOST: '0.0.0.0' }, { host: '0.0.0.0' }],
    [{ HOST: '::' }, { host: '::' }],
    [{ HOST: 'localhost' }, { host: 'localhost' }],
    [{ PORT: '0' }, { port: 0 }],
    [{ PORT: ' 65535 ' }, { port: 65535 }],
    [{ METRICS_PORT: '9464' }, { metricsPort: 9464 }],
    [{ WORKER_NICE: '0' }, { workerNice: 0 }],
    [{ DATA_DIR: '/var/lib/reposcan/' }, { dataDir: '/var/lib/reposcan' }],
    [{ DATA_DIR: 'relative/dir' }, { dataDir: resolve('relative/dir') }],
    [
      { REDIS_URL: 'redis://127.0.0.1:6379' },
      { redis: { kind: 'single', url: 'redis://127.0.0.1:6379' }, embedded: false, role: 'api' },
    ],
    [
      { REDIS_URL: 'rediss://user:pw@redis.internal:6380/2' },
      { redis: { kind: 'single', url: 'rediss://user:pw@redis.internal:6380/2' } },
    ],
    [
      { REDIS_CLUSTER_NODES: '10.0.0.1:7000, redis-b:7001,[::1]:7002', REDIS_PASSWORD: 'pw' },
      {
        redis: {
          kind: 'cluster',
          nodes: [
            { host: '10.0.0.1', port: 7000 },
            { host: 'redis-b', port: 7001 },
            { host: '::1', port: 7002 },
          ],
          password: 'pw',
        },
        queuePrefix: '{reposcan}',
        embedded: false,
        role: 'api',
      },
    ],
    [{ REDIS_CLUSTER_NODES: 'a:7000', QUEUE_PREFIX: 'ci-{run}' }, { queuePrefix: 'ci-{run}' }],
    [
      { REDIS_SENTINELS: 's1:26379,s2:26379', REDIS_SENTINEL_NAME: 'mymaster' },
      {
        redis: {
          kind: 'sentinel',
          sentinels: [
            { host: 's1', port: 26379 },
            { host: 's2', port: 26379 },
          ],
          name: 'mymaster',
        },
        queuePrefix: 'reposcan',
      },
    ],
    [{ REDIS_URL: 'redis://r:6379', QUEUE_PREFIX: '{reposcan}' }, { queuePrefix: '{reposcan}' }],
    [{ ROLE: 'ALL' }, { role: 'all' }],
    [{ WORKER_CONCURRENCY: '8' }, { workerConcurrency: 8 }],
    [{ ALLOWED_LOCAL_ROOTS: '/srv/a:/srv/b' }, { allowedLocalRoots: ['/srv/a', '/srv/b'] }],
    [{ GIT_ALLOWED_HOSTS: 'git.example.com' }, { gitAllowedHosts: ['git.example.com'] }],
    [{ GIT_ALLOW_HTTP: 'true' }, { gitAllowHttp: true }],
    [{ GIT_ALLOW_PRIVATE_HOSTS: 'YES' }, { gitAllowPrivateHosts: true }],
    [{ CORS_ORIGINS: 'https://app.example.com' }, { corsOrigins: ['https://app.example.com'] }],
    [{ SCAN_WAIT_SECONDS: '0' }, { scanWaitSeconds: 0 }],
    [{ SCAN_TTL_HOURS: '0' }, { scanTtlHours: 0 }],
    [{ TOKEN_ENCODING: 'cl100k_base' }, { tokenEncoding: 'cl100k_base' }],
    [{ QUEUE_PREFIX: 'ci-run-42' }, { queuePrefix: 'ci-run-42' }],
    [{ RATE_LIMIT_PER_MINUTE: '0' }, { rateLimitPerMinute: 0 }],
    [{ TRUST_PROXY: '1' }, { trustProxy: 1 }],
    [{ LOG_LEVEL: 'debug' }, { logLevel: 'debug' }],
    [{ MAX_JSON_BODY_BYTES: '131072' }, { maxJsonBodyBytes: 131_072 }],
    [{ MAX_UPLOAD_BYTES: '1048576' }, { maxUploadBytes: 1_048_576 }],
    [{ MAX_UNCOMPRESSED_BYTES: '2097152' }, { maxUncompressedBytes: 2_097_152 }],
    [{ MAX_ARCHIVE_ENTRIES: '20' }, { maxArchiveEntries: 20 }],
    [{ MAX_COMPRESSION_RATIO: '10' }, { maxCompressionRatio: 10 }],
    [{ MAX_PATH_DEPTH: '5' }, { maxPathDepth: 5 }],
    [{ MAX_FILE_BYTES: '1000' }, { maxFileBytes: 1000 }],
    [{ MAX_SCAN_FILES: '10' }, { maxScanFiles: 10 }],
    [{ CLONE_TIMEOUT_SECONDS: '5' }, { cloneTimeoutSeconds: 5 }],
    [{ MAX_CLONE_BYTES: '1000000' }, { maxCloneBytes: 1_000_000 }],
    [{ SCAN_TIMEOUT_SECONDS: '30' }, { scanTimeoutSeconds: 30 }],
    [{ WALK_TIMEOUT_SECONDS: '7' }, { walkTimeoutSeconds: 7 }],
    [{ CLONE_STALL_SECONDS: '3' }, { cloneStallSeconds: 3 }],
    [{ INSPECT_TIMEOUT_SECONDS: '3' }, { inspectTimeoutSeconds: 3 }],
    [{ INSPECT_CONCURRENCY: '1' }, { inspectConcurrency: 1 }],
    [{ INSPECT_RATE_LIMIT_PER_MINUTE: '0' }, { inspectRateLimitPerMinute: 0 }],
    [{ MAX_EVENT_STREAMS_PER_CLIENT: '1' }, { maxEventStreamsPerClient: 1 }],
    [{ MAX_EVENT_STREAMS: '5000' }, { maxEventStreams: 5000 }],
    [{ MAX_QUEUED_SCANS: '2' }, { maxQueuedScans: 2 }],
    [{ MIN_FREE_DISK_RATIO: '0' }, { minFreeDiskRatio: 0 }],
    [{ MIN_FREE_DISK_RATIO: '.1' }, { minFreeDiskRatio: 0.1 }],
    [{ JOB_ATTEMPTS: '1' }, { jobAttempts: 1 }],
    [{ ENABLE_QUEUE_DASHBOARD: '1' }, { enableQueueDashboard: true }],
    [{ JOB_LOCK_SECONDS: '2' }, { jobLockSeconds: 2 }],
    [{ SHUTDOWN_GRACE_SECONDS: '0' }, { shutdownGraceSeconds: 0 }],
    [{ JANITOR_INTERVAL_SECONDS: '1' }, { janitorIntervalSeconds: 1 }],
    [
      { FAULT_INJECTION: 'publish:block=6000, scan:crash@poison' },
      {
        faultInjection: [
          { point: 'publish', action: 'block', ms: 6000 },
          { point: 'scan', action: 'crash', match: 'poison' },
        ],
      },
    ],
    [
      { FAULT_INJECTION: 'accept:crash,clone:block,extract:enospc' },
      {
        faultInjection: [
          { point: 'accept', action: 'crash' },
          { point: 'clone', action: 'block' },
          { point: 'extract', action: 'enospc' },
        ],
      },
    ],
  ];

  it.each(cases)('%o', (env, expected) => {
    expect(loadConfig(env, { version: 'x' })).toMatchObject(expected);
  });

  it.each(['true', 'TRUE', '1', 'yes', 'Yes'])('boolean %s is true', (word) => {
    expect(loadConfig({ GIT_ALLOW_HTTP: word }, { version: 'x' }).gitAllowHttp).toBe(true);
  });

  it.each(['false', 'False', '0', 'no', 'NO'])('boolean %s is false', (word) => {
    expect(loadConfig({ ENABLE_QUEUE_DASHBOARD: word }, { version: 'x' }).enableQueueDashboard).toBe(false);
  });

  it.each([
    ['PORT', '1.5'],
    ['PORT', '-1'],
    ['PORT', '1e3'],
    ['PORT', '0x50'],
    ['PORT', '65536'],
    ['METRICS_PORT', 'on'],
    ['WORKER_NICE', '20'],
    ['WORKER_CONCURRENCY', '0'],
    ['MAX_UPLOAD_BYTES', '50MiB'],
    ['MAX_UPLOAD_BYTES', '99999999999999999999'],
    ['MAX_JSON_BODY_BYTES', '10'],
    ['SCAN_WAIT_SECONDS', '-5'],
    ['JOB_ATTEMPTS', '0'],
    ['MAX_EVENT_STREAMS_PER_CLIENT', '0'],
    ['MAX_EVENT_STREAMS', '0'],
    ['MIN_FREE_DISK_RATIO', '1'],
    ['MIN_FREE_DISK_RATIO', '-0.1'],
    ['MIN_FREE_DISK_RATIO', '5%'],
    ['GIT_ALLOW_HTTP', 'on'],
    ['FAULT_INJECTION', 'publish'],
    ['FAULT_INJECTION', 'render:crash'],
    ['FAULT_INJECTION', 'scan:explode'],
    ['FAULT_INJECTION', 'scan:crash=5'],
    ['JOB_LOCK_SECONDS', '0'],
    ['HOST', 'not a host'],
    ['DATA_DIR', 'a\u0000b'],
    ['REDIS_URL', 'localhost:6379'],
    ['TOKEN_ENCODING', 'p50k_base'],
    ['LOG_LEVEL', 'verbose'],
    ['QUEUE_PREFIX', '-dash'],
    ['QUEUE_PREFIX', '{}reposcan'],
    ['QUEUE_PREFIX', 'reposcan{'],
    ['REDIS_CLUSTER_NODES', 'redis-a'],
    ['REDIS_CLUSTER_NODES', 'redis-a:7000,redis-b:99999'],
    ['REDIS_CLUSTER_NODES', ','],
    ['ROLE', 'scheduler'],
  ])('%s=%j is refused', (name, value) => {
    const error = configError({ [name]: value });
    expect(error.problems).toHaveLength(1);
    expect(error.problems[0]).toMatch(new RegExp(`^${name}=.*: expected `));
  });
});

describe('ConfigError', () => {
  it('lists every problem at once, one line each with variable, value and what is expected', () => {
    const error = configError({
      PORT: 'eighty',
      GIT_ALLOW_HTTP: 'maybe',
      MAX_UPLOAD_BYTES: '-1',
      ALLOWED_LOCAL_ROOTS: 'relative/path',
      LOG_LEVEL: 'loud',
      ROLE: 'worker',
    });
    expect(error.problems).toEqual(
      [
        'PORT="eighty": expected a whole number from 0 to 65535',
        'ROLE="worker": expected api or all without Redis: a worker receives jobs through Redis (set REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS, or use ROLE=all)',
        'ALLOWED_LOCAL_ROOTS="relative/path": expected absolute folder paths separated by ":" (not absolute: relative/path)',
        'GIT_ALLOW_HTTP="maybe": expected true or false (or 1/0, yes/no)',
        'LOG_LEVEL="loud": expected one of fatal, error, warn, info, debug, trace, silent',
        'MAX_UPLOAD_BYTES="-1": expected a whole number of bytes from 1 to 1099511627776',
      ].sort((a, b) => order(a) - order(b)),
    );
    expect(error.message.split('\n')).toEqual([
      'Invalid configuration (6 problems):',
      ...error.problems.map((p) => `  ${p}`),
    ]);
    expect(error.name).toBe('ConfigError');
  });

  it('takes one Redis deployment at most, and a sentinel master name with sentinels', () => {
    expect(configError({ REDIS_URL: 'redis://r:6379', REDIS_CLUSTER_NODES: 'r:7000' }).problems).toEqual([
      'REDIS_URL="redis://r:6379": expected one of REDIS_URL, REDIS_CLUSTER_NODES, REDIS_SENTINELS at most: they are three ways to name the one Redis (a single server, a cluster, or a master behind sentinels)',
    ]);
    expect(configError({ REDIS_CLUSTER_NODES: 'r:7000', REDIS_SENTINELS: 's:26379' }).problems).toHaveLength(2);
    expect(configError({ REDIS_SENTINELS: 's:26379' }).problems).toEqual([
      'REDIS_SENTINEL_NAME=(unset): expected the name the sentinels monitor the master under (sentinel monitor <name> …), as REDIS_SENTINELS is set',
    ]);
  });

  it('never shows REDIS_PASSWORD', () => {
    const error = configError({ REDIS_PASSWORD: 'hunter2', REDIS_URL: 'redis://r:6379', REDIS_SENTINELS: 's:1' });
    expect(error.message).not.toContain('hunter2');
  });

  it('takes CREDENTIALS_KEY as 32 bytes in hex or base64, and never shows a wrong one', () => {
    const bytes = Buffer.alloc(32, 7);
    const hex = bytes.toString('hex');
    expect(loadConfig({ CREDENTIALS_KEY: hex.toUpperCase() }, { version: 'x' }).credentialsKey).toBe(hex);
    expect(loadConfig({ CREDENTIALS_KEY: bytes.toString('base64') }, { version: 'x' }).credentialsKey).toBe(hex);
    expect(loadConfig({ CREDENTIALS_KEY: bytes.toString('base64url') }, { version: 'x' }).credentialsKey).toBe(hex);
    for (const wrong of ['hunter2-hunter2', Buffer.alloc(16, 7).toString('base64'), `${hex}00`]) {
      const error = configError({ CREDENTIALS_KEY: wrong });
      expect(error.problems).toEqual([
        'CREDENTIALS_KEY="***": expected 32 random bytes as 64 hex digits or base64, e.g. the output of openssl rand -base64 32',
      ]);
    }
  });

  it('hides a Redis password and shortens very long values', () => {
    const error = configError({ REDIS_URL: 'http://admin:s3cret@redis:6379', HOST: 'h'.repeat(5000) });
    expect(error.message).not.toContain('s3cret');
    expect(error.message).toContain('REDIS_URL="http://admin:***@redis:6379"');
    expect(error.message.length).toBeLessThan(1000);
  });

  it('refuses a WEBHOOK_SECRET shorter than 16 characters without showing it', () => {
    const error = configError({ WEBHOOK_SECRET: 'short-s3cret' });
    expect(error.message).toContain('WEBHOOK_SECRET="***"');
    expect(error.message).toContain('16 characters or more');
    expect(error.message).not.toContain('short-s3cret');
  });
});

/** Problems are listed in variable order (the README's), whatever order the environment has. */
function order(problem: string): number {
  const names = ['PORT', 'ROLE', 'ALLOWED_LOCAL_ROOTS', 'GIT_ALLOW_HTTP', 'LOG_LEVEL', 'MAX_UPLOAD_BYTES'];
  return names.indexOf(problem.slice(0, problem.indexOf('=')));
}
