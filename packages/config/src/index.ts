// The one reader of process.env: every setting of the service, parsed and documented in one place.
export { loadConfig } from './load-config.js';
export type { LoadConfigOptions } from './load-config.js';
export { ConfigError } from './config-error.js';
export { CONFIG_DOCS } from './config-docs.js';
export type { ConfigDoc } from './config-docs.js';
export { CONFIG_VARIABLES, LOG_LEVELS, ROLES, TOKEN_ENCODINGS } from './config-schema.js';
export type { Config, ConfigVariableName, LogLevel, Role, TokenEncoding } from './config-schema.js';
