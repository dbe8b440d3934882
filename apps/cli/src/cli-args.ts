import { parseArgs } from 'node:util';
import type { ParseArgsConfig } from 'node:util';
import type { ArtifactFormat } from '@reposcan/client';
import { UsageError } from './exit-codes.js';

export const DEFAULT_SERVER = 'http://127.0.0.1:8000';
const FORMATS: readonly ArtifactFormat[] = ['txt', 'md', 'json', 'zip'];
const ENCODINGS = ['o200k_base', 'cl100k_base'] as const;
export type TokenEncoding = (typeof ENCODINGS)[number];

/** What a scan or an inspection keeps: the API's selection options. */
export interface Selection {
  branch: string | undefined;
  includePatterns: string[];
  excludePatterns: string[];
  excludeDirs: string[];
  treeDepth: number | null;
  docsOnly: boolean;
  syncIgnore: boolean;
  skipTree: boolean;
  sizeLimit: number | null;
}

interface Common {
  target: string;
  /** Run the engine in this process on a local folder; no server. */
  local: boolean;
  server: string;
  json: boolean;
  quiet: boolean;
  selection: Selection;
}

export interface ScanArgs extends Common {
  command: 'scan';
  output: string;
  /** Formats to download; null = every format the scan produced. */
  formats: ArtifactFormat[] | null;
  lite: boolean;
  createZip: boolean;
  encoding: TokenEncoding;
  cleanup: boolean;
}

export interface InspectArgs extends Common {
  command: 'inspect';
  tree: boolean;
}

export type CliArgs = ScanArgs | InspectArgs | { command: 'help'; topic: 'scan' | 'inspect' | null } | { command: 'version' };

const selectionOptions = {
  branch: { type: 'string' },
  include: { type: 'string', multiple: true },
  exclude: { type: 'string', multiple: true },
  'exclude-dir': { type: 'string', multiple: true },
  'tree-depth': { type: 'string' },
  'docs-only': { type: 'boolean' },
  'no-sync-ignore': { type: 'boolean' },
  'skip-tree': { type: 'boolean' },
  'size-limit': { type: 'string' },
  local: { type: 'boolean' },
  server: { type: 'string' },
  json: { type: 'boolean' },
  quiet: { type: 'boolean', short: 'q' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options'];

const scanOptions = {
  ...selectionOptions,
  output: { type: 'string', short: 'o' },
  format: { type: 'string', multiple: true },
  lite: { type: 'boolean' },
  zip: { type: 'boolean' },
  encoding: { type: 'string' },
  cleanup: { type: 'boolean' },
} as const satisfies ParseArgsConfig['options'];

const inspectOptions = {
  ...selectionOptions,
  tree: { type: 'boolean' },
} as const satisfies ParseArgsConfig['options'];

/** Parse `reposcan …` arguments (without node and the script). Throws UsageError. */
export function parseCliArgs(argv: string[], env: NodeJS.ProcessEnv): CliArgs {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h') return { command: 'help', topic: null };
  if (command === '--version' || command === '-V') return { command: 'version' };
  if (command === 'help') {
    const topic = rest[0];
    if (topic === undefined) return { command: 'help', topic: null };
    if (topic === 'scan' || topic === 'inspect') return { command: 'help', topic };
    throw new UsageError(`there is no command "${topic}"; the commands are scan and inspect.`);
  }
  if (command === 'scan') return parseScan(rest, env);
  if (command === 'inspect') return parseInspect(rest, env);
  throw new UsageError(command.startsWith('-') ? `give a command before options: reposcan scan|inspect …` : `unknown command "${command}"; the commands are scan and inspect.`);
}

function parseScan(argv: string[], env: NodeJS.ProcessEnv): CliArgs {
  const { values, positionals } = parse(argv, scanOptions);
  if (values.help) return { command: 'help', topic: 'scan' };
  const common = commonArgs('scan', values, positionals, env);
  const formats = values.format ? listOf(values.format).map((f) => oneOf('--format', f, FORMATS)) : null;
  if (formats?.length === 0) throw new UsageError('--format needs at least one of txt, md, json, zip.');
  const encoding = values.encoding === undefined ? 'o200k_base' : oneOf('--encoding', values.encoding, ENCODINGS);
  if (values.encoding !== undefined && !common.local) throw new UsageError('--encoding applies to --local scans; a server counts tokens in its own TOKEN_ENCODING.');
  if (values.cleanup && common.local) throw new UsageError('--cleanup deletes the scan from the server; a --local scan has nothing to delete.');
  if (values.output === '') throw new UsageError('-o/--output needs a folder.');
  return {
    ...common,
    command: 'scan',
    output: values.output ?? '.',
    formats: formats ? [...new Set(formats)] : null,
    lite: values.lite ?? false,
    // Asking for the zip asks the scan to build it.
    createZip: (values.zip ?? false) || (formats?.includes('zip') ?? false),
    encoding,
    cleanup: values.cleanup ?? false,
  };
}

function parseInspect(argv: string[], env: NodeJS.ProcessEnv): CliArgs {
  const { values, positionals } = parse(argv, inspectOptions);
  if (values.help) return { command: 'help', topic: 'inspect' };
  return { ...commonArgs('inspect', values, positionals, env), command: 'inspect', tree: values.tree ?? false };
}

type SelectionValues = {
  [K in keyof typeof selectionOptions]?: (typeof selectionOptions)[K] extends { multiple: true } ? string[] : (typeof selectionOptions)[K]['type'] extends 'string' ? string : boolean;
};

function commonArgs(command: 'scan' | 'inspect', values: SelectionValues, positionals: string[], env: NodeJS.ProcessEnv): Common {
  if (positionals.length === 0) throw new UsageError(`reposcan ${command} needs a target: a repository URL, a folder${command === 'scan' ? ' or a .zip file' : ''}.`);
  if (positionals.length > 1) throw new UsageError(`reposcan ${command} takes one target; got ${positionals.length}: ${positionals.join(' ')}.`);
  const local = values.local ?? false;
  if (local && values.server !== undefined) throw new UsageError('--local runs the engine in this process; it does not use --server.');
  if (local && values.branch !== undefined) throw new UsageError('--branch needs a remote repository; --local scans the folder as it is on disk.');
  const server = values.server ?? (env.REPOSCAN_SERVER || DEFAULT_SERVER);
  if (!local) checkServerUrl(server);
  return {
    target: positionals[0]!,
    local,
    server,
    json: values.json ?? false,
    quiet: values.quiet ?? false,
    selection: {
      branch: values.branch,
      includePatterns: listOf(values.include),
      excludePatterns: listOf(values.exclude),
      excludeDirs: listOf(values['exclude-dir']),
      treeDepth: values['tree-depth'] === undefined ? null : integer('--tree-depth', values['tree-depth'], 0, 100),
      docsOnly: values['docs-only'] ?? false,
      syncIgnore: !(values['no-sync-ignore'] ?? false),
      skipTree: values['skip-tree'] ?? false,
      sizeLimit: values['size-limit'] === undefined ? null : integer('--size-limit', values['size-limit'], 1, Number.MAX_SAFE_INTEGER),
    },
  };
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
  return (values ?? []).flatMap((v) => v.split(',')).map((v) => v.trim()).filter((v) => v.length > 0);
}

function oneOf<T extends string>(flag: string, value: string, allowed: readonly T[]): T {
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw new UsageError(`${flag} must be one of ${allowed.join(', ')}; got "${value}".`);
}

function integer(flag: string, value: string, min: number, max: number): number {
  const n = /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) throw new UsageError(`${flag} must be a whole number from ${min}${max === Number.MAX_SAFE_INTEGER ? ' up' : ` to ${max}`}; got "${value}".`);
  return n;
}

function checkServerUrl(server: string): void {
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw new UsageError(`--server must be an http(s) URL such as ${DEFAULT_SERVER}; got "${server}".`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`--server must be an http(s) URL such as ${DEFAULT_SERVER}; got "${server}".`);
}
