import { readFile } from 'node:fs/promises';
import { parseCliArgs } from './cli-args.js';
import type { CliArgs } from './cli-args.js';
import type { CliIo } from './cli-io.js';
import { EXIT, ScanEndedError, UsageError } from './exit-codes.js';
import type { ExitCode } from './exit-codes.js';
import { INSPECT_HELP, KEYS_HELP, MAIN_HELP, MCP_HELP, SCAN_HELP } from './help-text.js';
import type { ScanOutcome } from './scan-outcome.js';
import type { CompressionReport, SecretsReport } from '@reposcan/client';

// Commands and the client load when a command runs: help and usage errors answer without them.

/** Run one `reposcan …` invocation; returns the exit code. Never throws. */
export async function runCli(argv: string[], io: CliIo): Promise<ExitCode> {
  let args: CliArgs;
  try {
    args = parseCliArgs(argv, io.env);
  } catch (error) {
    // Even a command line that does not parse answers --json with a JSON document.
    return report(error, io, argv.includes('--json'));
  }
  const json = 'json' in args && args.json;
  try {
    switch (args.command) {
      case 'usage':
        io.stderr.write(MAIN_HELP);
        return EXIT.USAGE;
      case 'help':
        io.stdout.write(
          args.topic === 'scan'
            ? SCAN_HELP
            : args.topic === 'inspect'
              ? INSPECT_HELP
              : args.topic === 'keys'
                ? KEYS_HELP
                : args.topic === 'mcp'
                  ? MCP_HELP
                  : MAIN_HELP,
        );
        return EXIT.OK;
      case 'version':
        io.stdout.write(`${await version()}\n`);
        return EXIT.OK;
      case 'scan': {
        const outcome = args.local
          ? await (await import('./commands/scan-local.js')).scanLocal(args, io)
          : await (await import('./commands/scan-on-server.js')).scanOnServer(args, io);
        printScan(outcome, json, args.quiet, io);
        return EXIT.OK;
      }
      case 'keys':
        await (await import('./commands/keys.js')).keys(args, io);
        return EXIT.OK;
      case 'mcp':
        await (await import('./commands/mcp.js')).mcp(args, io, await version());
        return EXIT.OK;
      case 'inspect': {
        const preview = await (await import('./commands/inspect.js')).inspect(args, io);
        const { renderInspectTable } = await import('./inspect-table.js');
        io.stdout.write(json ? `${JSON.stringify(preview, null, 2)}\n` : renderInspectTable(preview, args.tree));
        return EXIT.OK;
      }
    }
  } catch (error) {
    return report(error, io, json);
  }
}

function printScan(outcome: ScanOutcome, json: boolean, quiet: boolean, io: CliIo): void {
  if (json) {
    io.stdout.write(`${JSON.stringify(outcome, null, 2)}\n`);
    return;
  }
  for (const file of outcome.files) io.stdout.write(`${file.path}\n`);
  io.stdout.write(`${outcome.summary_file.path}\n`);
  if (quiet) return;
  const r = outcome.result;
  const id = outcome.scan_id ? ` (scan ${outcome.scan_id})` : '';
  io.stderr.write(
    `${r.repo_name}${r.branch ? ` @ ${r.branch}` : ''}: ${r.num_textual_files} textual, ${r.num_non_textual_files} non-textual files, ` +
      `${r.summary.formatted.total_size}, ${r.summary.formatted.estimated_tokens} tokens, ${r.skipped_count} skipped${id}\n`,
  );
  if (r.secrets) io.stderr.write(secretsLines(r.secrets));
  if (r.compression) io.stderr.write(compressionLines(r.compression));
}

/** Tokens before and after, and the files kept as they were (too large, too slow, a syntax error). */
export function compressionLines(compression: CompressionReport): string {
  const saved = compression.tokens_before - compression.tokens_after;
  const share = compression.tokens_before > 0 ? Math.round((100 * saved) / compression.tokens_before) : 0;
  const lines = [
    `${compression.files} code file${compression.files === 1 ? '' : 's'} transformed: ${compression.tokens_before} -> ${compression.tokens_after} tokens (-${share} %)`,
  ];
  for (const f of compression.not_compressed) lines.push(`  kept as is (${f.reason}): ${f.path}`);
  return `${lines.join('\n')}\n`;
}

/** The findings, one a line (never the secret): what a person must look at before sharing the outputs. */
export function secretsLines(secrets: SecretsReport): string {
  const what = secrets.mode === 'redact' ? 'redacted in the outputs' : 'left in the outputs (--secrets report)';
  const lines = [`${secrets.count} possible secret${secrets.count === 1 ? '' : 's'} ${what}`];
  for (const f of secrets.findings) lines.push(`  ${f.path}:${f.line}:${f.column}  ${f.rule} (${f.kind})`);
  if (secrets.not_checked.length > 0)
    lines.push(`${secrets.not_checked.length} file(s) over 2 MiB not checked: ${secrets.not_checked.join(', ')}`);
  return secrets.count === 0 && secrets.not_checked.length === 0 ? '' : `${lines.join('\n')}\n`;
}

interface Failure {
  exit_code: ExitCode;
  message: string;
  status?: number;
  code?: string;
  detail?: string;
  request_id?: string | null;
  scan_id?: string | null;
}

/** Map an error to its exit code and print it: a sentence on stderr, and with --json a document on stdout. */
async function report(error: unknown, io: CliIo, json: boolean): Promise<ExitCode> {
  const failure = await classify(error);
  io.stderr.write(`reposcan: ${failure.message}\n`);
  if (failure.exit_code === EXIT.USAGE) io.stderr.write('Run `reposcan --help` for usage.\n');
  if (json) {
    // Every key always there (null where it does not apply: no HTTP answer, no scan), so a script reads one shape.
    const error = {
      exit_code: failure.exit_code,
      status: failure.status ?? null,
      code: failure.code ?? null,
      detail: failure.detail ?? failure.message,
      request_id: failure.request_id ?? null,
      scan_id: failure.scan_id ?? null,
    };
    io.stdout.write(`${JSON.stringify({ error }, null, 2)}\n`);
  }
  return failure.exit_code;
}

async function classify(error: unknown): Promise<Failure> {
  if (error instanceof UsageError) return { exit_code: EXIT.USAGE, message: error.message, code: 'USAGE' };
  if (error instanceof ScanEndedError) {
    const id = error.scanId ? ` ${error.scanId}` : '';
    return {
      exit_code: EXIT.SCAN_FAILED,
      message: `scan${id} ${error.state}: ${error.code}: ${error.detail}`,
      code: error.code,
      detail: error.detail,
      scan_id: error.scanId,
    };
  }
  const { ReposcanApiError, ReposcanConnectionError, ReposcanIntegrityError } = await import('@reposcan/client');
  if (error instanceof ReposcanApiError) {
    const fields = {
      status: error.status,
      code: error.code,
      detail: error.detail,
      request_id: error.request_id,
      scan_id: error.scan_id,
    };
    const ref = error.request_id ? ` (request ${error.request_id})` : '';
    // A failure that belongs to a scan that exists is the scan's failure, not a refusal.
    if (error.scan_id)
      return {
        ...fields,
        exit_code: EXIT.SCAN_FAILED,
        message: `scan ${error.scan_id} failed: ${error.code}: ${error.detail}${ref}`,
      };
    // Something answered, but not a reposcan API (a proxy's page, a wrong --server): unusable.
    if (error.status >= 500 || error.code === 'UNEXPECTED_RESPONSE')
      return {
        ...fields,
        exit_code: EXIT.UNAVAILABLE,
        message: `${error.code === 'UNEXPECTED_RESPONSE' ? 'what answered is not a reposcan API' : 'the server failed'} (HTTP ${error.status} ${error.code}): ${error.detail}${ref}`,
      };
    return {
      ...fields,
      exit_code: EXIT.REFUSED,
      message: `the API refused the request (HTTP ${error.status} ${error.code}): ${error.detail}${ref}`,
    };
  }
  if (error instanceof ReposcanConnectionError) {
    return {
      exit_code: EXIT.UNAVAILABLE,
      code: 'SERVER_UNREACHABLE',
      message: `${error.message}; is the server running? (--server or REPOSCAN_SERVER)`,
    };
  }
  if (error instanceof ReposcanIntegrityError)
    return { exit_code: EXIT.UNAVAILABLE, code: 'INTEGRITY', message: error.message };
  const message = error instanceof Error ? error.message : String(error);
  return { exit_code: EXIT.UNEXPECTED, code: 'UNEXPECTED', message: `unexpected error: ${message}` };
}

async function version(): Promise<string> {
  // One level above both src/ and dist/.
  const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}
