import { parseArgs } from 'node:util';
import type { ParseArgsConfig } from 'node:util';
import {
  ARTIFACT_FORMATS,
  DEFAULT_TOKEN_ENCODING,
  PREVIEW_OPTION_NAMES,
  SCAN_OPTION_FLAGS,
  SCAN_OPTION_NAMES,
  SCAN_OPTIONS,
  TOKEN_ENCODINGS,
} from '@reposcan/contracts/vocabulary';
import type {
  ArtifactFormatName,
  PreviewScanOptions,
  ScanOptionName,
  TokenEncodingName,
  WireScanOptions,
} from '@reposcan/contracts/vocabulary';
import { UsageError } from './exit-codes.js';

export const DEFAULT_SERVER = 'http://127.0.0.1:8000';
export type TokenEncoding = TokenEncodingName;

export interface GitTokenArg {
  value: string;
  /** Where it came from: a flag on a target that clones nothing is a mistake, the variable is not. */
  from: '--git-token' | 'REPOSCAN_GIT_TOKEN';
}

interface Common {
  target: string;
  /** Run the engine in this process on a local folder; no server. */
  local: boolean;
  server: string;
  json: boolean;
  quiet: boolean;
  /** Branch or tag of a remote repository. */
  branch: string | undefined;
  /** The API key for a server with keys (--api-key, else REPOSCAN_API_KEY); undefined: send none. */
  apiKey: string | undefined;
  /** --git-token, else $REPOSCAN_GIT_TOKEN: a credential for a private remote repository. */
  gitToken: GitTokenArg | undefined;
}

export interface ScanArgs extends Common {
  command: 'scan';
  /** Every scan option, as the API names them (defaults where no flag was given). */
  options: WireScanOptions;
  /** -o; null = the default (see chooseOutputFolder). */
  output: string | null;
  /** Formats to download; null = every format the scan produced. */
  formats: ArtifactFormatName[] | null;
  encoding: TokenEncoding;
  cleanup: boolean;
  /** --local: use the per-user token cache (`--no-cache`: count every file). */
  cache: boolean;
  /** --callback-url: the server POSTs the scan's status there when it ends (server mode only). */
  callbackUrl: string | undefined;
}

export interface InspectArgs extends Common {
  command: 'inspect';
  /** The options that select files: what a preview takes. */
  options: PreviewScanOptions;
  /** --max-tokens: estimate the parts of that budget (null: none). */
  maxTokensPerPart: number | null;
  tree: boolean;
}

/** `reposcan keys add|revoke|list`: the server's key file, edited where the server reads it. */
export interface KeysArgs {
  command: 'keys';
  action: 'add' | 'revoke' | 'list';
  /** The key's name (add, revoke). */
  name: string;
  admin: boolean;
  rate: number | null;
  inspect: number | null;
  /** --file, else API_KEYS_FILE. */
  file: string;
}

/** `reposcan mcp`: the MCP tools on stdin/stdout, backed by a reposcan server. */
export interface McpArgs {
  command: 'mcp';
  server: string;
  apiKey: string | undefined;
}

export type HelpTopic = 'scan' | 'inspect' | 'keys' | 'mcp';

/** `usage`: no command at all, a usage error that prints the whole usage (on stderr). */
export type CliArgs =
  | ScanArgs
  | InspectArgs
  | KeysArgs
  | McpArgs
  | { command: 'help'; topic: HelpTopic | null }
  | { command: 'version' }
  | { command: 'usage' };

const commonOptions = {
  branch: { type: 'string' },
  'git-token': { type: 'string' },
  local: { type: 'boolean' },
  server: { type: 'string' },
  'api-key': { type: 'string' },
  json: { type: 'boolean' },
  quiet: { type: 'boolean', short: 'q' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options'];

/** parseArgs options of the scan options' flags: a switch takes no value, a list may repeat. */
function optionFlags(names: readonly ScanOptionName[]): ParseArgsConfig['options'] {
  return Object.fromEntries(
    names.map((name) => {
      const kind = SCAN_OPTIONS[name].kind;
      return [flagKey(name), kind === 'switch' ? { type: 'boolean' } : { type: 'string', multiple: kind === 'list' }];
    }),
  );
}

/** The key parseArgs reports an option's flag under: the flag without its leading `--`. */
function flagKey(name: ScanOptionName): string {
  return SCAN_OPTION_FLAGS[name].flag.slice(2);
}

const scanOptions = {
  ...commonOptions,
  ...optionFlags(SCAN_OPTION_NAMES),
  output: { type: 'string', short: 'o' },
  format: { type: 'string', multiple: true },
  encoding: { type: 'string' },
  cleanup: { type: 'boolean' },
  'no-cache': { type: 'boolean' },
  'callback-url': { type: 'string' },
} as const satisfies ParseArgsConfig['options'];

/** The output option a preview also takes: it answers how many parts a budget would give. */
const PREVIEW_ESTIMATES = ['max_tokens_per_part'] as const satisfies readonly ScanOptionName[];

const inspectOptions = {
  ...commonOptions,
  ...optionFlags([...PREVIEW_OPTION_NAMES, ...PREVIEW_ESTIMATES]),
  tree: { type: 'boolean' },
} as const satisfies ParseArgsConfig['options'];

/** Parse `reposcan …` arguments (without node and the script). Throws UsageError. */
export function parseCliArgs(argv: string[], env: NodeJS.ProcessEnv): CliArgs {
  const [command, ...rest] = argv;
  if (command === undefined) return { command: 'usage' };
  if (command === '--help' || command === '-h') return { command: 'help', topic: null };
  if (command === '--version' || command === '-V') return { command: 'version' };
  if (command === 'help') {
    const topic = rest[0];
    if (topic === undefined) return { command: 'help', topic: null };
    if (topic === 'scan' || topic === 'inspect' || topic === 'keys' || topic === 'mcp')
      return { command: 'help', topic };
    throw new UsageError(`there is no command "${topic}"; the commands are scan, inspect, keys and mcp.`);
  }
  if (command === 'scan') return parseScan(rest, env);
  if (command === 'inspect') return parseInspect(rest, env);
  if (command === 'keys') return parseKeys(rest, env);
  if (command === 'mcp') return parseMcp(rest, env);
  throw new UsageError(
    command.startsWith('-')
      ? `give a command before options: reposcan scan|inspect …`
      : `unknown command "${command}"; the commands are scan, inspect, keys and mcp.`,
  );
}

function parseScan(argv: string[], env: NodeJS.ProcessEnv): CliArgs {
  const { values, positionals } = parse(argv, scanOptions);
  if (values.help) return { command: 'help', topic: 'scan' };
  const common = commonArgs('scan', values, positionals, env);
  const options: WireScanOptions = optionValues(SCAN_OPTION_NAMES, values);
  const formats = values.format ? listOf(values.format).map((f) => oneOf('--format', f, ARTIFACT_FORMATS)) : null;
  if (formats?.length === 0) throw new UsageError(`--format needs at least one of ${ARTIFACT_FORMATS.join(', ')}.`);
  const encoding =
    values.encoding === undefined ? DEFAULT_TOKEN_ENCODING : oneOf('--encoding', values.encoding, TOKEN_ENCODINGS);
  if (values.encoding !== undefined && !common.local)
    throw new UsageError('--encoding applies to --local scans; a server counts tokens in its own TOKEN_ENCODING.');
  if (values.cleanup && common.local)
    throw new UsageError('--cleanup deletes the scan from the server; a --local scan has nothing to delete.');
  if (values['no-cache'] && !common.local)
    throw new UsageError('--no-cache applies to --local scans; a server keeps its own token cache.');
  if (values['callback-url'] !== undefined && common.local)
    throw new UsageError('--callback-url asks a server to POST the finished scan; a --local scan has no server.');
  if (values['callback-url'] === '') throw new UsageError('--callback-url needs a URL (https://…).');
  if (values.output === '') throw new UsageError('-o/--output needs a folder.');
  // Asking for the zip asks the scan to build it.
  if (formats?.includes('zip')) options.create_zip = true;
  return {
    ...common,
    command: 'scan',
    options,
    output: values.output ?? null,
    formats: formats ? [...new Set(formats)] : null,
    encoding,
    cleanup: values.cleanup ?? false,
    cache: !(values['no-cache'] ?? false),
    callbackUrl: values['callback-url'],
  };
}

function parseInspect(argv: string[], env: NodeJS.ProcessEnv): CliArgs {
  const { values, positionals } = parse(argv, inspectOptions);
  if (values.help) return { command: 'help', topic: 'inspect' };
  const common = commonArgs('inspect', values, positionals, env);
  return {
    ...common,
    command: 'inspect',
    options: optionValues(PREVIEW_OPTION_NAMES, values),
    maxTokensPerPart: optionValues(PREVIEW_ESTIMATES, values).max_tokens_per_part,
    tree: values.tree ?? false,
  };
}

type CommonValues = {
  [K in keyof typeof commonOptions]?: (typeof commonOptions)[K]['type'] extends 'string' ? string : boolean;
};
type FlagValues = Record<string, string | boolean | Array<string | boolean> | undefined>;

function commonArgs(
  command: 'scan' | 'inspect',
  values: CommonValues,
  positionals: string[],
  env: NodeJS.ProcessEnv,
): Common {
  if (positionals.length === 0)
    throw new UsageError(
      `reposcan ${command} needs a target: a repository URL, a folder${command === 'scan' ? ' or a .zip file' : ''}.`,
    );
  if (positionals.length > 1)
    throw new UsageError(`reposcan ${command} takes one target; got ${positionals.length}: ${positionals.join(' ')}.`);
  const local = values.local ?? false;
  if (local && values.server !== undefined)
    throw new UsageError('--local runs the engine in this process; it does not use --server.');
  if (local && values.branch !== undefined)
    throw new UsageError('--branch needs a remote repository; --local scans the folder as it is on disk.');
  if (local && values['api-key'] !== undefined)
    throw new UsageError('--local runs the engine in this process; it needs no --api-key.');
  if (values['api-key'] === '') throw new UsageError('--api-key needs the key (rsk_…).');
  if (local && values['git-token'] !== undefined)
    throw new UsageError('--git-token is for a private remote repository; --local reads the folder on disk.');
  const server = values.server ?? (env.REPOSCAN_SERVER || DEFAULT_SERVER);
  if (!local) checkServerUrl(server);
  return {
    target: positionals[0]!,
    local,
    server,
    json: values.json ?? false,
    quiet: values.quiet ?? false,
    branch: values.branch,
    apiKey: local ? undefined : values['api-key'] || env.REPOSCAN_API_KEY || undefined,
    // The variable is the safer way: an argument is visible to every user of the machine (ps).
    gitToken: local ? undefined : gitTokenArg(values['git-token'], env.REPOSCAN_GIT_TOKEN),
  };
}

const keysOptions = {
  admin: { type: 'boolean' },
  rate: { type: 'string' },
  inspect: { type: 'string' },
  file: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options'];

const KEY_ACTIONS = ['add', 'revoke', 'list'] as const;

const mcpOptions = {
  server: { type: 'string' },
  'api-key': { type: 'string' },
  local: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options'];

function parseMcp(argv: string[], env: NodeJS.ProcessEnv): CliArgs {
  const { values, positionals } = parse(argv, mcpOptions);
  if (values.help) return { command: 'help', topic: 'mcp' };
  if (positionals.length > 0)
    throw new UsageError(
      `reposcan mcp takes no target (the agent names one per tool call); got ${positionals.join(' ')}.`,
    );
  if (values.local)
    throw new UsageError(
      'reposcan mcp talks to a reposcan server; for a machine of your own, start one (npm start) and point --server at it.',
    );
  if (values['api-key'] === '') throw new UsageError('--api-key needs the key (rsk_…).');
  const server = values.server ?? (env.REPOSCAN_SERVER || DEFAULT_SERVER);
  checkServerUrl(server);
  return { command: 'mcp', server, apiKey: values['api-key'] || env.REPOSCAN_API_KEY || undefined };
}

function parseKeys(argv: string[], env: NodeJS.ProcessEnv): CliArgs {
  const { values, positionals } = parse(argv, keysOptions);
  if (values.help) return { command: 'help', topic: 'keys' };
  const [action, name, ...extra] = positionals;
  if (action === undefined) throw new UsageError('reposcan keys needs an action: add, revoke or list.');
  const chosen = oneOf('reposcan keys', action, KEY_ACTIONS);
  if (chosen !== 'list' && name === undefined) throw new UsageError(`reposcan keys ${chosen} needs the key's name.`);
  if (chosen === 'list' && name !== undefined) throw new UsageError('reposcan keys list takes no name.');
  if (extra.length > 0) throw new UsageError(`reposcan keys ${chosen} takes one name; got ${positionals.length - 1}.`);
  if (chosen !== 'add' && (values.admin || values.rate !== undefined || values.inspect !== undefined))
    throw new UsageError('--admin, --rate and --inspect describe a new key: use them with reposcan keys add.');
  const file = values.file || env.API_KEYS_FILE;
  if (!file) throw new UsageError('say which key file: --file <path>, or set API_KEYS_FILE as the server has it.');
  return {
    command: 'keys',
    action: chosen,
    name: name ?? '',
    admin: values.admin ?? false,
    rate: values.rate === undefined ? null : integer('--rate', values.rate, 0, 9_999_999),
    inspect: values.inspect === undefined ? null : integer('--inspect', values.inspect, 0, 9_999_999),
    file,
  };
}

function gitTokenArg(flag: string | undefined, variable: string | undefined): GitTokenArg | undefined {
  if (flag !== undefined) {
    if (flag === '') throw new UsageError('--git-token needs a value: a token or user:token.');
    return { value: flag, from: '--git-token' };
  }
  return variable ? { value: variable, from: 'REPOSCAN_GIT_TOKEN' } : undefined;
}

/** The named options from their flags, in the API's spelling; an absent flag leaves the default. */
function optionValues<K extends ScanOptionName>(names: readonly K[], values: FlagValues): Pick<WireScanOptions, K> {
  const options: Record<string, unknown> = {};
  for (const name of names) {
    const row = SCAN_OPTIONS[name];
    const { flag } = SCAN_OPTION_FLAGS[name];
    const given = values[flagKey(name)];
    switch (row.kind) {
      case 'switch':
        // A switch's flag turns the option from its default (so an option that is on by default has a `--no-…` flag).
        options[name] = given === true ? !row.default : row.default;
        break;
      case 'list':
        options[name] = listOf(given as string[] | undefined);
        break;
      case 'choice':
        options[name] = given === undefined ? row.default : oneOf(flag, given as string, row.values);
        break;
      case 'count':
        options[name] =
          given === undefined
            ? null
            : integer(flag, given as string, row.min, 'max' in row ? row.max : Number.MAX_SAFE_INTEGER);
        break;
      case 'ref':
        options[name] = given === undefined ? null : refName(flag, given as string);
        break;
    }
  }
  return options as Pick<WireScanOptions, K>;
}

function parse<O extends ParseArgsConfig['options']>(argv: string[], options: O) {
  try {
    return parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (error) {
    // parseArgs explains the problem ("Unknown option '--x'"); keep its sentence.
    throw new UsageError((error as Error).message.replace(/\. To specify a positional argument.*$/s, '.'));
  }
}

/** Repeated options and comma lists both work: `--include a --include b` = `--include a,b`. */
function listOf(values: string[] | undefined): string[] {
  return (values ?? [])
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter((v) => v.length > 0);
}

/** The API's pattern for a ref (a name or a full commit id), checked here for a sentence before any request. */
function refName(flag: string, value: string): string {
  if (/^(?!-)(?!.*\.\.)(?!.*\/\/)(?!.*\/$)(?!.*\.lock$)[A-Za-z0-9._+/-]{1,200}$/.test(value)) return value;
  throw new UsageError(`${flag} must be a plain branch or tag name, or a full commit id; got "${value}".`);
}

function oneOf<T extends string>(flag: string, value: string, allowed: readonly T[]): T {
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw new UsageError(`${flag} must be one of ${allowed.join(', ')}; got "${value}".`);
}

function integer(flag: string, value: string, min: number, max: number): number {
  const n = /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max)
    throw new UsageError(
      `${flag} must be a whole number from ${min}${max === Number.MAX_SAFE_INTEGER ? ' up' : ` to ${max}`}; got "${value}".`,
    );
  return n;
}

function checkServerUrl(server: string): void {
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw new UsageError(`--server must be an http(s) URL such as ${DEFAULT_SERVER}; got "${server}".`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UsageError(`--server must be an http(s) URL such as ${DEFAULT_SERVER}; got "${server}".`);
}
