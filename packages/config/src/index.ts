// The one reader of process.env (and of .env beneath it): every setting of the service, parsed and documented in one place.
export { loadConfig } from './load-config.js';
export type { LoadConfigOptions } from './load-config.js';
export { ENV_FILE_NAME, environmentWithEnvFile, readEnvFile } from './env-file.js';
export { ConfigError } from './config-error.js';
export { CONFIG_DOCS, renderConfigTable, renderEnvExample } from './config-docs.js';
export type { ConfigDoc } from './config-docs.js';
export { CONFIG_VARIABLES, LOG_LEVELS, ROLES, TOKEN_ENCODINGS } from './config-schema.js';
export type { Config, ConfigVariableName, LogLevel, Role, TokenEncoding } from './config-schema.js';
export { FAULT_POINTS } from './env-parsers.js';
export { describeRedisTarget, hasHashTag } from './redis-target.js';
export type { RedisNode, RedisTarget } from './redis-target.js';
export type { FaultPoint, FaultRule } from './env-parsers.js';
export {
  API_KEY_NAME,
  API_KEY_NAME_RULE,
  API_KEY_PREFIX,
  apiKeyRecord,
  formatApiKeyLine,
  generateApiKey,
  matchApiKey,
  parseApiKeyFile,
} from './api-keys.js';
export type { ApiKeyOptions, ApiKeyRecord, ParsedKeyFile } from './api-keys.js';
