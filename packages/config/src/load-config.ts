import { readFileSync } from 'node:fs';
import type { z } from 'zod';
import { ConfigError } from './config-error.js';
import { CONFIG_VARIABLES, ConfigSchema } from './config-schema.js';
import { environmentWithEnvFile } from './env-file.js';
import type { Config } from './config-schema.js';

export interface LoadConfigOptions {
  /** Overrides the version read from the root package.json. */
  version?: string;
}

/**
 * Reads the configuration from `env`: by default the process environment over `.env` in the
 * working directory (environmentWithEnvFile). Throws a ConfigError listing every bad variable (or
 * malformed line of `.env`); the apps print its message and exit(1). The result is deeply frozen.
 */
export function loadConfig(
  env: Record<string, string | undefined> = environmentWithEnvFile(),
  options: LoadConfigOptions = {},
): Config {
  const parsed = ConfigSchema.safeParse(env);
  if (!parsed.success)
    throw new ConfigError(inVariableOrder(parsed.error.issues).map((issue) => describeIssue(issue, env)));
  return deepFreeze({ ...parsed.data, version: options.version ?? rootVersion() });
}

const MAX_SHOWN = 120;
const VARIABLE_ORDER: readonly PropertyKey[] = Object.keys(CONFIG_VARIABLES);

/** Cross-variable rules report after the per-variable checks; list everything in README order instead. */
function inVariableOrder(issues: readonly z.core.$ZodIssue[]): z.core.$ZodIssue[] {
  const rank = (issue: z.core.$ZodIssue) => {
    const index = VARIABLE_ORDER.indexOf(issue.path[0] ?? '');
    return index === -1 ? VARIABLE_ORDER.length : index;
  };
  return [...issues].sort((a, b) => rank(a) - rank(b));
}

function describeIssue(issue: z.core.$ZodIssue, env: Record<string, string | undefined>): string {
  const name = String(issue.path[0] ?? '(environment)');
  const raw = env[name];
  const value =
    raw === undefined
      ? '(unset)'
      : JSON.stringify(redact(name, raw.length > MAX_SHOWN ? `${raw.slice(0, MAX_SHOWN)}…` : raw));
  return `${name}=${value}: ${issue.message}`;
}

/** A Redis password, API keys or the credentials key must not reach the logs through an error message. */
function redact(name: string, value: string): string {
  if (name === 'REDIS_PASSWORD' || name === 'API_KEYS' || name === 'CREDENTIALS_KEY' || name === 'WEBHOOK_SECRET')
    return '***';
  return name === 'REDIS_URL' ? value.replace(/\/\/([^/@]*):[^/@]*@/, '//$1:***@') : value;
}

let cachedVersion: string | undefined;

function rootVersion(): string {
  if (cachedVersion === undefined) {
    // src/ and dist/ both sit at packages/config/<dir>/, three levels below the repository root.
    const file = new URL('../../../package.json', import.meta.url);
    const { version } = JSON.parse(readFileSync(file, 'utf8')) as { version?: unknown };
    if (typeof version !== 'string') throw new ConfigError([`version: the root package.json has no "version"`]);
    cachedVersion = version;
  }
  return cachedVersion;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}
