import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONFIG_DOCS, loadConfig, renderConfigTable, renderEnvExample } from '../src/index.js';

// The variables the API documents as its configuration, and the service's own operational ones, in README order.
const CONTRACT_VARIABLES = [
  'HOST',
  'PORT',
  'METRICS_PORT',
  'DATA_DIR',
  'REDIS_URL',
  'REDIS_CLUSTER_NODES',
  'REDIS_SENTINELS',
  'REDIS_SENTINEL_NAME',
  'REDIS_PASSWORD',
  'ROLE',
  'WORKER_CONCURRENCY',
  'WORKER_NICE',
  'ALLOWED_LOCAL_ROOTS',
  'GIT_ALLOWED_HOSTS',
  'GIT_ALLOW_HTTP',
  'GIT_ALLOW_PRIVATE_HOSTS',
  'GIT_CREDENTIALS_FILE',
  'CREDENTIALS_KEY',
  'GIT_TOKEN_TTL_SECONDS',
  'CORS_ORIGINS',
  'SCAN_WAIT_SECONDS',
  'SCAN_TTL_HOURS',
  'TOKEN_ENCODING',
  'TOKEN_CACHE_MAX_ENTRIES',
  'FILE_CACHE_DAYS',
  'QUEUE_PREFIX',
  'RATE_LIMIT_PER_MINUTE',
  'TRUST_PROXY',
  'LOG_LEVEL',
  'MAX_JSON_BODY_BYTES',
  'MAX_UPLOAD_BYTES',
  'MAX_UNCOMPRESSED_BYTES',
  'MAX_ARCHIVE_ENTRIES',
  'MAX_COMPRESSION_RATIO',
  'MAX_PATH_DEPTH',
  'MAX_FILE_BYTES',
  'MAX_SCAN_FILES',
  'CLONE_TIMEOUT_SECONDS',
  'CLONE_STALL_SECONDS',
  'MAX_CLONE_BYTES',
  'SCAN_TIMEOUT_SECONDS',
  'WALK_TIMEOUT_SECONDS',
  'INSPECT_TIMEOUT_SECONDS',
  'INSPECT_CONCURRENCY',
  'INSPECT_RATE_LIMIT_PER_MINUTE',
  'MAX_EVENT_STREAMS_PER_CLIENT',
  'MAX_EVENT_STREAMS',
  'MAX_QUEUED_SCANS',
  'MIN_FREE_DISK_RATIO',
  'JOB_ATTEMPTS',
  'JOB_LOCK_SECONDS',
  'SHUTDOWN_GRACE_SECONDS',
  'JANITOR_INTERVAL_SECONDS',
  'ENABLE_QUEUE_DASHBOARD',
  'API_KEYS_FILE',
  'API_KEYS',
  'PROTECT_OPS_ROUTES',
  'WEBHOOK_SECRET',
  'WEBHOOK_ALLOWED_HOSTS',
  'WEBHOOK_ALLOW_HTTP',
  'WEBHOOK_ALLOW_PRIVATE_HOSTS',
  'WEBHOOK_TIMEOUT_SECONDS',
  'WEBHOOK_RETRY_BASE_MS',
  'FAULT_INJECTION',
];

// Defaults that depend on the host or on other variables, so the docs describe them in words.
const COMPUTED = [
  'METRICS_PORT',
  'REDIS_URL',
  'REDIS_CLUSTER_NODES',
  'REDIS_SENTINELS',
  'REDIS_SENTINEL_NAME',
  'REDIS_PASSWORD',
  'ROLE',
  'WORKER_CONCURRENCY',
  'ALLOWED_LOCAL_ROOTS',
  'GIT_CREDENTIALS_FILE',
  'CREDENTIALS_KEY',
  'TRUST_PROXY',
  'API_KEYS_FILE',
  'API_KEYS',
  'WEBHOOK_SECRET',
  'FAULT_INJECTION',
];

describe('CONFIG_DOCS', () => {
  it('documents exactly these variables, each with a default and a one-line description', () => {
    expect(CONFIG_DOCS.map((d) => d.name)).toEqual(CONTRACT_VARIABLES);
    for (const doc of CONFIG_DOCS) {
      expect(doc.default, doc.name).not.toBe('');
      expect(doc.description, doc.name).toMatch(/^[A-Z"].*\.$/);
      expect(doc.description, doc.name).not.toContain('\n');
    }
  });

  it('every literal default in the docs is the value applied when the variable is unset', () => {
    const documented = Object.fromEntries(
      CONFIG_DOCS.filter((d) => !COMPUTED.includes(d.name)).map((d) => [d.name, d.default]),
    );
    expect(loadConfig(documented, { version: 'x' })).toEqual(loadConfig({}, { version: 'x' }));
  });

  it('is frozen', () => {
    expect(Object.isFrozen(CONFIG_DOCS)).toBe(true);
    expect(Object.isFrozen(CONFIG_DOCS[0])).toBe(true);
  });

  it('is what .env.example and the README table say (regenerate both with `npm run config-docs`)', () => {
    const file = (name: string): string => readFileSync(new URL(`../../../${name}`, import.meta.url), 'utf8');
    expect(file('.env.example')).toBe(renderEnvExample());
    expect(file('README.md')).toContain(renderConfigTable());
  });
});
