import { availableParallelism } from 'node:os';
import { z } from 'zod';
import { DEFAULT_TOKEN_ENCODING, orList, TOKEN_ENCODINGS } from '@reposcan/contracts/vocabulary';
import type { TokenEncodingName } from '@reposcan/contracts/vocabulary';
import { parseApiKeyPairs } from './api-keys.js';
import type { ApiKeyRecord } from './api-keys.js';
import {
  absolutePath,
  corsOrigins,
  faultRules,
  flag,
  fraction,
  fromEnv,
  gitHosts,
  listenHost,
  localRoots,
  oneOf,
  anyText,
  key256,
  queuePrefix,
  redisNodes,
  redisUrl,
  trustProxy,
  unsetAs,
  wholeNumber,
  withDefault,
} from './env-parsers.js';
import { Expected } from './env-parsers.js';
import type { FaultRule, Parser } from './env-parsers.js';
import { hasHashTag } from './redis-target.js';
import type { RedisTarget } from './redis-target.js';

export const ROLES = ['api', 'worker', 'all'] as const;
export type Role = (typeof ROLES)[number];
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export { TOKEN_ENCODINGS };
export type TokenEncoding = TokenEncodingName;

const GiB = 1024 ** 3;
const TiB = 1024 ** 4;
const DAY_SECONDS = 86_400;

/** API_KEYS: the pairs, hashed at once (the plain keys stay nowhere in the configuration). */
const apiKeyPairs: Parser<readonly ApiKeyRecord[]> = (text) => {
  const keys = parseApiKeyPairs(text);
  return typeof keys === 'string' ? new Expected(keys) : keys;
};

/** WEBHOOK_SECRET: long enough that it cannot be guessed from signatures. */
const webhookSecret: Parser<string> = (text) =>
  text.length >= 16 ? text : new Expected('a secret of 16 characters or more (e.g. openssl rand -hex 32)');

/** A variable whose default is a literal value: documented and applied from the same text. */
function variable<T>(defaultText: string, description: string, parse: Parser<T>) {
  return { default: defaultText, description, schema: withDefault(defaultText, parse) };
}

/** A variable whose default is computed or "unset": `defaultDoc` describes it for the docs. */
function computed<T>(defaultDoc: string, description: string, parse: (text: string | undefined) => T | Expected) {
  return { default: defaultDoc, description, schema: fromEnv(parse) };
}

/**
 * Every environment variable the service reads in README order. The
 * description is the documentation: README, `.env.example` and CONFIG_DOCS come from here.
 */
export const CONFIG_VARIABLES = {
  HOST: variable(
    '127.0.0.1',
    "Address the API, or a worker's METRICS_PORT server, listens on (compose sets 0.0.0.0).",
    listenHost,
  ),
  PORT: variable('8000', 'TCP port of the API (0 picks a free port).', wholeNumber(0, 65535)),
  METRICS_PORT: computed(
    'unset (off)',
    'ROLE=worker only: serve GET /metrics, GET /health (liveness) and GET /ready (readiness) on this port for Prometheus and probes; unset serves nothing.',
    unsetAs(null, wholeNumber(0, 65535)),
  ),
  DATA_DIR: variable(
    './data',
    'The shared volume for scans, uploads and staging; relative paths resolve against the working directory.',
    absolutePath,
  ),
  REDIS_URL: computed(
    'unset',
    'A single Redis for the job queue, e.g. redis://127.0.0.1:6379 (user, password, database and rediss:// TLS in the URL); with none of REDIS_URL, REDIS_CLUSTER_NODES and REDIS_SENTINELS set, an embedded in-memory queue runs instead. Set at most one of the three.',
    unsetAs(null, redisUrl),
  ),
  REDIS_CLUSTER_NODES: computed(
    'unset',
    "A Redis Cluster for the job queue: some of its nodes as host:port, comma-separated (the client learns the rest). QUEUE_PREFIX gets a hash tag ({reposcan}) unless it has one, so that all of a queue's keys share a slot.",
    unsetAs(null, redisNodes),
  ),
  REDIS_SENTINELS: computed(
    'unset',
    "Redis Sentinels watching the job queue's Redis, host:port comma-separated: the service asks them for the master named REDIS_SENTINEL_NAME and follows it through failovers.",
    unsetAs(null, redisNodes),
  ),
  REDIS_SENTINEL_NAME: computed(
    'unset',
    'With REDIS_SENTINELS (and needed there): the name the sentinels monitor the master under, e.g. mymaster.',
    unsetAs(null, anyText),
  ),
  REDIS_PASSWORD: computed(
    'unset',
    'Password of the Redis servers of REDIS_CLUSTER_NODES or REDIS_SENTINELS (a REDIS_URL carries its own); never logged.',
    unsetAs(null, anyText),
  ),
  ROLE: computed(
    'all without Redis, else api',
    'What this process runs: api, worker, or all (API plus an in-process worker); worker needs Redis (REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS).',
    unsetAs(undefined, oneOf(ROLES)),
  ),
  WORKER_CONCURRENCY: computed(
    'cores − 1, min 1',
    'Scans run at once per worker process.',
    unsetAs(Math.max(1, availableParallelism() - 1), wholeNumber(1, 256)),
  ),
  WORKER_NICE: variable(
    '19',
    'ROLE=worker only: the nice value (0–19) a worker process lowers the CPU priority of all its threads (those Node itself starts included) to at start, so an API or anything latency-bound on the same host gets the CPU first (it still gets all the CPU nobody else wants); 0 keeps normal priority. Tokenizer and io threads always run at nice 19.',
    wholeNumber(0, 19),
  ),
  ALLOWED_LOCAL_ROOTS: computed(
    'unset',
    'Absolute folders, ":"-separated, that a local repo_path may point into; unset refuses local paths. Each process warns at start of one that is not a folder.',
    unsetAs([] as readonly string[], localRoots),
  ),
  GIT_ALLOWED_HOSTS: variable(
    'github.com,gitlab.com,bitbucket.org,codeberg.org,gitea.com',
    'Git hosts that may be cloned: host names (any port) or host:port, comma-separated; "*" allows any public host.',
    gitHosts,
  ),
  GIT_ALLOW_HTTP: variable('false', 'Allow plain http:// clones (self-hosted git, tests).', flag),
  GIT_ALLOW_PRIVATE_HOSTS: variable(
    'false',
    'Allow clones from private, loopback and link-local addresses (self-hosted git, tests).',
    flag,
  ),
  // Private repositories: credentials that reach git only (docs/operations.md, private repositories).
  GIT_CREDENTIALS_FILE: computed(
    'unset',
    "A file of per-host git credentials read by whoever clones (workers, and the API for previews), so clients never see them: one line per host, `<host>[:port] <token>` or `<host>[:port] <user>:<token>`, `#` starts a comment. A request's own git_token wins. Keep it readable by the service only.",
    unsetAs(null, absolutePath),
  ),
  CREDENTIALS_KEY: computed(
    'unset',
    "With Redis: the key (32 random bytes, hex or base64; `openssl rand -base64 32`) that seals a request's git_token (AES-256-GCM) while it waits for a worker; every API and worker process needs the same one. Unset: requests with a git token are refused (503 CREDENTIALS_KEY_MISSING). Not needed in the embedded mode; never logged.",
    unsetAs(null, key256),
  ),
  GIT_TOKEN_TTL_SECONDS: variable(
    '3600',
    "How long a request's sealed git token waits for a worker before it is forgotten (a scan that starts later fails REPO_AUTH_FAILED); deleted as soon as the clone is done.",
    wholeNumber(60, 604_800, 'seconds'),
  ),
  CORS_ORIGINS: variable('*', 'Origins allowed by CORS, comma-separated; "*" allows all.', corsOrigins),
  SCAN_WAIT_SECONDS: variable(
    '60',
    'How long POST /v1/scan and /v1/upload wait for the result before answering 202.',
    wholeNumber(0, 3600, 'seconds'),
  ),
  SCAN_TTL_HOURS: variable(
    '24',
    'Finished scans older than this are deleted by the janitor; 0 keeps them.',
    wholeNumber(0, 87_600, 'hours'),
  ),
  TOKEN_ENCODING: variable(
    DEFAULT_TOKEN_ENCODING,
    `BPE encoding for token counts: ${orList(TOKEN_ENCODINGS)}.`,
    oneOf(TOKEN_ENCODINGS),
  ),
  TOKEN_CACHE_MAX_ENTRIES: variable(
    '1000000',
    "Token counts kept by content hash on the volume, shared by every worker, so a rescan counts only changed files; about 40 B each in a worker's memory and 20 B on disk; 0 turns the cache off.",
    wholeNumber(0, 100_000_000),
  ),
  FILE_CACHE_DAYS: variable(
    '7',
    'Days the file cache keeps what scans of remote repositories processed per file (its outcome and text, by path and git blob id, only for scans with `secrets: redact`), on the volume and shared by every worker, after it was last used: a rescan of a new commit then fetches and reads only the files that changed. 0 turns the cache off (nothing is kept or taken).',
    wholeNumber(0, 3650, 'days'),
  ),
  QUEUE_PREFIX: variable(
    'reposcan',
    'Key prefix of the queue and everything else the service keeps in Redis (and of the state-change channel), so several deployments or test runs can share one Redis. Braces make a hash tag ({reposcan}); on a cluster one is added when missing.',
    queuePrefix,
  ),
  RATE_LIMIT_PER_MINUTE: variable(
    '60',
    'Scan and upload requests per client per minute, across every API process of the deployment when Redis is used (previews have their own budget, INSPECT_RATE_LIMIT_PER_MINUTE); every request counts, a refused one too, so wait for Retry-After before trying again; 0 turns the limit off.',
    wholeNumber(0, 1_000_000),
  ),
  TRUST_PROXY: computed(
    'unset (false)',
    'Express "trust proxy": true/false, a hop count, or a comma list of proxy addresses/subnets; decides the client address for rate limits.',
    unsetAs(false, trustProxy),
  ),
  LOG_LEVEL: variable('info', 'Log level: fatal, error, warn, info, debug, trace or silent.', oneOf(LOG_LEVELS)),
  MAX_JSON_BODY_BYTES: variable(
    '65536',
    'Largest JSON request body (64 KiB).',
    wholeNumber(1024, 64 * 1024 ** 2, 'bytes'),
  ),
  MAX_UPLOAD_BYTES: variable('52428800', 'Largest uploaded .zip (50 MiB).', wholeNumber(1, TiB, 'bytes')),
  MAX_UNCOMPRESSED_BYTES: variable(
    '524288000',
    'Largest total size of an upload once extracted (500 MiB).',
    wholeNumber(1, TiB, 'bytes'),
  ),
  MAX_ARCHIVE_ENTRIES: variable('10000', 'Most entries in an uploaded archive.', wholeNumber(1, 10_000_000)),
  MAX_COMPRESSION_RATIO: variable(
    '100',
    'Highest uncompressed-to-compressed ratio of an archive entry or the whole archive.',
    wholeNumber(1, 100_000),
  ),
  MAX_PATH_DEPTH: variable('50', 'Deepest folder nesting in an archive or a scanned tree.', wholeNumber(1, 1000)),
  MAX_FILE_BYTES: variable(
    '10485760',
    'Largest file that is read; larger ones are skipped as too_large (10 MiB). An ignore file (.gitignore, .gittxtignore) larger than this stops the scan with IGNORE_FILE_TOO_LARGE.',
    wholeNumber(1, GiB, 'bytes'),
  ),
  MAX_SCAN_FILES: variable(
    '50000',
    'Most files a scan keeps; the rest are skipped with reason limit.',
    wholeNumber(1, 10_000_000),
  ),
  CLONE_TIMEOUT_SECONDS: variable('120', 'Wall-clock limit of a git clone.', wholeNumber(1, DAY_SECONDS, 'seconds')),
  CLONE_STALL_SECONDS: variable(
    '20',
    'A git server that sends less than 1 kB/s for this long (not answering at all included) is given up on: the scan fails with CLONE_TIMEOUT at once, without another attempt.',
    wholeNumber(1, 3600, 'seconds'),
  ),
  MAX_CLONE_BYTES: variable('1073741824', 'Largest clone on disk (1 GiB).', wholeNumber(1, TiB, 'bytes')),
  SCAN_TIMEOUT_SECONDS: variable('600', 'Wall-clock limit of one scan job.', wholeNumber(1, DAY_SECONDS, 'seconds')),
  WALK_TIMEOUT_SECONDS: variable(
    '120',
    "Wall-clock limit of listing one tree (a scan's or a preview's walk); past it the walk is stopped and the scan fails with WALK_TIMEOUT.",
    wholeNumber(1, DAY_SECONDS, 'seconds'),
  ),
  INSPECT_TIMEOUT_SECONDS: variable('30', 'Wall-clock limit of POST /v1/inspect.', wholeNumber(1, 3600, 'seconds')),
  INSPECT_CONCURRENCY: variable(
    '4',
    'Inspections at once per API process; one client (an API key, or an address when keys are off) holds at most half of them (at least one). More are refused with 429.',
    wholeNumber(1, 256),
  ),
  INSPECT_RATE_LIMIT_PER_MINUTE: variable(
    '240',
    'Inspect (preview) requests per client per minute (per deployment with Redis, as RATE_LIMIT_PER_MINUTE), a budget of their own: previews never use up RATE_LIMIT_PER_MINUTE, so a page previewing as you type cannot lock you out of scanning; 0 turns the limit off.',
    wholeNumber(0, 1_000_000),
  ),
  MAX_EVENT_STREAMS_PER_CLIENT: variable(
    '20',
    'Event streams (GET /v1/scans/{id}/events) one client may hold open at once, the client address as for RATE_LIMIT_PER_MINUTE; more are refused with 429. Enough for a dashboard following many scans, while no one client takes more than 1 % of MAX_EVENT_STREAMS.',
    wholeNumber(1, 1_000_000),
  ),
  MAX_EVENT_STREAMS: variable(
    '2000',
    'Event streams one API process holds open at once; more are refused with 503. 2 000 idle streams cost 1–2 % of a core and 40–50 MB (npm run bench, section streams).',
    wholeNumber(1, 1_000_000),
  ),
  MAX_QUEUED_SCANS: variable(
    '500',
    'Most scans waiting in the queue; more are refused with 503.',
    wholeNumber(1, 1_000_000),
  ),
  MIN_FREE_DISK_RATIO: variable(
    '0.05',
    'New work is refused with 507 when the data volume has less free space than this share; 0 turns the check off.',
    fraction,
  ),
  JOB_ATTEMPTS: variable(
    '3',
    'Attempts per scan job for transient failures (network, Redis), with exponential backoff.',
    wholeNumber(1, 100),
  ),
  JOB_LOCK_SECONDS: variable(
    '30',
    "How long a worker holds a scan without renewing its lock; a killed worker's scan runs again elsewhere after about twice this.",
    wholeNumber(1, 3600, 'seconds'),
  ),
  SHUTDOWN_GRACE_SECONDS: variable(
    '30',
    'On SIGTERM, how long a worker lets its running scans finish before handing them back to the queue, and an API its requests still running before closing their connections.',
    wholeNumber(0, DAY_SECONDS, 'seconds'),
  ),
  JANITOR_INTERVAL_SECONDS: variable(
    '60',
    'Seconds between janitor sweeps (lost jobs, stale staging, expired scans) on each API and worker process.',
    wholeNumber(1, DAY_SECONDS, 'seconds'),
  ),
  ENABLE_QUEUE_DASHBOARD: variable(
    'false',
    'Serve a read-only bull-board queue dashboard at /admin/queues (needs Redis); it shows job data, so keep it behind your proxy.',
    flag,
  ),
  // API keys: off unless API_KEYS_FILE or API_KEYS is set.
  API_KEYS_FILE: computed(
    'unset (no keys)',
    'A file of API keys, one a line: <name> <salt>:<sha256> [scope=admin] [rate=N] [inspect=N], as `reposcan keys add` writes it (README, API keys). With it (or API_KEYS) every /v1 request needs Authorization: Bearer <key>; the file is read again whenever it changes, so a revoked key is refused at the next request.',
    unsetAs(null, absolutePath),
  ),
  API_KEYS: computed(
    'unset (no keys)',
    'API keys for small setups, in clear: comma-separated name:key pairs (name:key:admin for an admin key), each key 16 characters or more; adds to API_KEYS_FILE. Never logged.',
    unsetAs([] as readonly ApiKeyRecord[], apiKeyPairs),
  ),
  PROTECT_OPS_ROUTES: variable(
    'false',
    'With API keys on: GET /metrics and the queue dashboard (/admin/queues) need a key with scope=admin too (Bearer, or Basic with the key as password for a browser); /health and /ready stay open.',
    flag,
  ),
  // Completion webhooks: off for a request unless it carries callback_url, refused then without a secret.
  WEBHOOK_SECRET: computed(
    'unset (callback_url refused)',
    'Key of the HMAC-SHA256 signature of every webhook delivery (X-Reposcan-Signature), 16 characters or more; every API and worker process needs the same one. Without it a request with callback_url is refused with 422 WEBHOOKS_NOT_CONFIGURED. Never logged.',
    unsetAs(null, webhookSecret),
  ),
  WEBHOOK_ALLOWED_HOSTS: variable(
    '*',
    'Hosts a callback_url may name: host names (any port) or host:port, comma-separated; "*" allows any public host.',
    gitHosts,
  ),
  WEBHOOK_ALLOW_HTTP: variable(
    'false',
    'Allow plain http:// callback URLs (tests, a receiver on a private network).',
    flag,
  ),
  WEBHOOK_ALLOW_PRIVATE_HOSTS: variable(
    'false',
    'Allow callback URLs on private, loopback and link-local addresses (checked at submit and again before each delivery).',
    flag,
  ),
  WEBHOOK_TIMEOUT_SECONDS: variable(
    '10',
    'Wall-clock limit of one delivery attempt (connect, send, answer); past it the attempt counts as failed.',
    wholeNumber(1, 300, 'seconds'),
  ),
  WEBHOOK_RETRY_BASE_MS: variable(
    '2000',
    'Unit of the delays between delivery attempts (×1, ×4, ×15, ×60, ×300: 2 s, 8 s, 30 s, 2 min, 10 min by default; 6 attempts in all). Lower it only in tests.',
    wholeNumber(10, 600_000, 'milliseconds'),
  ),
  FAULT_INJECTION: computed(
    'unset',
    'Tests only: make this process crash, hang or hit a full disk at a point of a scan, e.g. publish:block=6000 (README, Operations). Never set it in production.',
    unsetAs([] as readonly FaultRule[], faultRules),
  ),
} as const;

export type ConfigVariableName = keyof typeof CONFIG_VARIABLES;
type EnvValues = { [K in ConfigVariableName]: z.output<(typeof CONFIG_VARIABLES)[K]['schema']> };

type CamelCase<S extends string> = S extends `${infer Head}_${infer Tail}`
  ? `${Lowercase<Head>}${Capitalize<CamelCase<Tail>>}`
  : Lowercase<S>;
type CamelEnv = { readonly [K in ConfigVariableName as CamelCase<K>]: EnvValues[K] };

/** Read into `redis` (one RedisTarget), never on their own: a password stays out of everything else. */
type RedisVariables = 'redisUrl' | 'redisClusterNodes' | 'redisSentinels' | 'redisSentinelName' | 'redisPassword';

/** The parsed configuration: each variable under its camelCase name (MAX_UPLOAD_BYTES → maxUploadBytes), deeply frozen. */
export interface Config extends Omit<CamelEnv, 'role' | RedisVariables> {
  readonly role: Role;
  /** The queue's Redis, from REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS; null: the embedded in-memory queue. */
  readonly redis: RedisTarget | null;
  /** No Redis: the API runs an in-process worker over an in-memory queue. */
  readonly embedded: boolean;
  /** The service version, from the root package.json. */
  readonly version: string;
}

function camelCase(name: string): string {
  return name.toLowerCase().replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase());
}

const shape = Object.fromEntries(Object.entries(CONFIG_VARIABLES).map(([name, v]) => [name, v.schema])) as {
  [K in ConfigVariableName]: (typeof CONFIG_VARIABLES)[K]['schema'];
};

type ParsedEnv = z.output<z.ZodObject<typeof shape>>;

function redisTarget(env: ParsedEnv): RedisTarget | null {
  const password = env.REDIS_PASSWORD === null ? {} : { password: env.REDIS_PASSWORD };
  if (env.REDIS_URL !== null) return { kind: 'single', url: env.REDIS_URL };
  if (env.REDIS_CLUSTER_NODES !== null) return { kind: 'cluster', nodes: env.REDIS_CLUSTER_NODES, ...password };
  if (env.REDIS_SENTINELS !== null)
    return { kind: 'sentinel', sentinels: env.REDIS_SENTINELS, name: env.REDIS_SENTINEL_NAME ?? '', ...password };
  return null;
}

const REDIS_CHOICES = ['REDIS_URL', 'REDIS_CLUSTER_NODES', 'REDIS_SENTINELS'] as const;

/** Parses, coerces and defaults every variable; other keys of the environment are ignored. */
export const ConfigSchema = z
  .object(shape)
  // `when` makes these rules report alongside problems in other variables, not only once they are fixed.
  .refine((env) => REDIS_CHOICES.filter((name) => env[name] !== null).length <= 1, {
    when: () => true,
    path: ['REDIS_URL'],
    message: `expected one of ${REDIS_CHOICES.join(', ')} at most: they are three ways to name the one Redis (a single server, a cluster, or a master behind sentinels)`,
  })
  .refine((env) => env.REDIS_SENTINELS === null || env.REDIS_SENTINEL_NAME !== null, {
    when: () => true,
    path: ['REDIS_SENTINEL_NAME'],
    message:
      'expected the name the sentinels monitor the master under (sentinel monitor <name> …), as REDIS_SENTINELS is set',
  })
  .refine((env) => !(env.ROLE === 'worker' && REDIS_CHOICES.every((name) => env[name] === null)), {
    when: () => true,
    path: ['ROLE'],
    message:
      'expected api or all without Redis: a worker receives jobs through Redis (set REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS, or use ROLE=all)',
  })
  .transform((env): Omit<Config, 'version'> => {
    const fields = Object.fromEntries(
      Object.entries(env)
        .filter(([name]) => !name.startsWith('REDIS_'))
        .map(([name, value]) => [camelCase(name), value]),
    ) as unknown as Omit<CamelEnv, RedisVariables>;
    const redis = redisTarget(env);
    const queuePrefix =
      redis?.kind === 'cluster' && !hasHashTag(env.QUEUE_PREFIX) ? `{${env.QUEUE_PREFIX}}` : env.QUEUE_PREFIX;
    return {
      ...fields,
      queuePrefix,
      redis,
      role: env.ROLE ?? (redis === null ? 'all' : 'api'),
      embedded: redis === null,
    };
  });
