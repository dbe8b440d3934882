import {
  ARTIFACT_FORMATS,
  DEFAULT_TOKEN_ENCODING,
  isOutputOption,
  orList,
  SCAN_OPTION_FLAGS,
  TOKEN_ENCODINGS,
} from '@reposcan/contracts/vocabulary';
import type { ScanOptionName } from '@reposcan/contracts/vocabulary';
import { API_KEY_NAME_RULE } from '@reposcan/config/api-keys';
import { DEFAULT_SERVER } from './cli-args.js';

/** One line of an option list: the flag, then its explanation from column 27. */
function line(flag: string, text: string): string {
  return `  ${flag.padEnd(23)}  ${text}`;
}

/** The scan options' lines, in the order the flag table lists them. */
function optionLines(output: boolean): string {
  return (Object.keys(SCAN_OPTION_FLAGS) as ScanOptionName[])
    .filter((name) => isOutputOption(name) === output)
    .map((name) => {
      const f: { flag: string; arg?: string; help: string } = SCAN_OPTION_FLAGS[name];
      return line(f.arg === undefined ? f.flag : `${f.flag} ${f.arg}`, f.help);
    })
    .join('\n');
}

const ENCODING_CHOICES = orList(TOKEN_ENCODINGS.map((e) => (e === DEFAULT_TOKEN_ENCODING ? `${e} (default)` : e)));

const EXIT_CODES = `Exit codes:
  0  success: the scan or inspection finished and every requested file was written
  1  unexpected error (a bug)
  2  usage error: unknown option, missing target, a value of the wrong form
  3  the API refused the request (4xx): its code and sentence are printed
  4  the scan ended failed or cancelled: its error code and message are printed
  5  server unreachable or not a reposcan API, a 5xx answer, or a download that fails
     its checksum`;

const SELECTION = `Selection (as the API's options):
  --branch <name>          branch or tag of a remote repository
  --git-token <token>      token or user:token for a private repository (default:
                           $REPOSCAN_GIT_TOKEN, which other users cannot see in ps)
${optionLines(false)}`;

const COMMON = `Common options:
  --server <url>           the reposcan API (default: $REPOSCAN_SERVER or ${DEFAULT_SERVER})
  --api-key <key>          the API key of a server with keys (default: $REPOSCAN_API_KEY; the
                           variable keeps it out of the process list and shell history)
  --local                  run the engine in this process on a folder; no server needed
  --json                   print one JSON document on stdout and nothing else there
  -q, --quiet              no progress on stderr
  -h, --help               this help`;

export const MAIN_HELP = `reposcan: scan code repositories into LLM-ready txt/md/json digests (and a ZIP bundle).

Usage:
  reposcan scan <url | folder | file.zip> [options]   scan and download the artifacts
  reposcan scan --local <folder> [options]             scan in this process, no server
  reposcan inspect <url | folder> [options]            preview files and token estimates
  reposcan keys add|revoke|list [name] [options]       manage the server's API key file
  reposcan mcp [--server <url>] [--api-key <key>]      serve the MCP tools to an agent on stdio
  reposcan help <command>                              options of a command
  reposcan --version

Targets: https:// and git@ URLs go to the server as repo_path; an existing *.zip file is
uploaded; anything else is a folder path, made absolute and read by the server (it must lie
inside the server's ALLOWED_LOCAL_ROOTS) or, with --local, by this process.

Progress goes to stderr (a bar on a terminal, one line per phase otherwise); stdout carries
only the result: the written file paths, the inspect table, or with --json one JSON document.

${EXIT_CODES}
`;

export const SCAN_HELP = `Usage: reposcan scan <url | folder | file.zip> [options]

Submits the scan (POST /v1/scan or /v1/upload with wait=false), follows its event stream,
then downloads the artifacts, checks each against the size and SHA-256 the result lists, and
writes them as <output>/<repo>.<format>, with <repo>.summary.json (every file, and every skipped
path with its reason). stdout: one written path per line.

Output:
  -o, --output <dir>       folder for the artifacts (default: the current folder, or, when that
                           lies inside the scanned folder, $XDG_CACHE_HOME/reposcan/out/<repo>;
                           created if missing). With --local, an output folder inside the
                           scanned one is left out of the walk
  --format <list>          formats to download: ${ARTIFACT_FORMATS.join(', ')} (default: all produced;
                           asking for zip implies ${SCAN_OPTION_FLAGS.create_zip.flag})
${optionLines(true)}
  --cleanup                delete the scan from the server after downloading
  --callback-url <url>     the server POSTs the scan's status to this https URL when it ends,
                           signed with its WEBHOOK_SECRET (not with --local)
  --encoding <name>        with --local: ${ENCODING_CHOICES}
  --no-cache               with --local: count every file (skip the token cache in
                           $XDG_CACHE_HOME/reposcan)

${SELECTION}

${COMMON}

--json prints {"scan_id","state","result","files":[{"format","path","bytes","sha256"}],
"summary_file":{"path","bytes"}};
on failure it prints {"error":{"exit_code","status","code","detail","request_id","scan_id"}}.

${EXIT_CODES}

Examples:
  reposcan scan https://github.com/octocat/Hello-World -o out
  reposcan scan "$PWD" --include '*.ts' --exclude '*.test.ts' --format md
  reposcan scan repo.zip --zip --json > result.json
  reposcan scan --local . --exclude-dir dist -o /tmp/digest
`;

export const INSPECT_HELP = `Usage: reposcan inspect <url | folder> [options]

Previews what a scan would keep (POST /v1/inspect): prints a table of path, type, size and
estimated tokens, then the totals. Nothing is written anywhere.

  --tree                   print the directory tree before the table
  --max-tokens <n>         also estimate how many parts of at most n tokens the txt
                           output would take (a scan with the same flag writes them)

${SELECTION}

${COMMON}

--json prints the preview as the API returns it (repository, summary, files, skipped_count).

${EXIT_CODES}

Examples:
  reposcan inspect https://github.com/octocat/Hello-World
  reposcan inspect --local . --include '*.md' --json
`;

export const KEYS_HELP = `Usage: reposcan keys add <name> [--admin] [--rate N] [--inspect N] [--file PATH]
       reposcan keys revoke <name> [--file PATH]
       reposcan keys list [--file PATH]

Edits the server's API key file (API_KEYS_FILE, or --file) on the machine or volume where the
server reads it; every API process picks a change up at its next request.

  add <name>               make a new key, print it once on stdout, and add its salted hash
                           under <name> (${API_KEY_NAME_RULE}); a name in use is refused
  revoke <name>            remove the key: requests with it get 401 at once
  list                     the names, scopes and limits in the file (never a key)
  --admin                  scope=admin: may see and delete every scan, and the ops routes
  --rate <N>               scans and uploads per minute for this key (instead of
                           RATE_LIMIT_PER_MINUTE; 0: no limit)
  --inspect <N>            previews per minute for this key (instead of
                           INSPECT_RATE_LIMIT_PER_MINUTE; 0: no limit)
  --file <path>            the key file (default: $API_KEYS_FILE); created if missing

The key itself is stored nowhere: keep what add prints (a password manager, a secret store).
Clients send it as Authorization: Bearer <key> (reposcan: --api-key or $REPOSCAN_API_KEY).

Examples:
  reposcan keys add ci --rate 120 --file /etc/reposcan/keys
  reposcan keys add ops --admin --file /etc/reposcan/keys
  REPOSCAN_API_KEY=rsk_… reposcan scan https://github.com/octocat/Hello-World
  reposcan keys revoke alice --file /etc/reposcan/keys
`;

export const MCP_HELP = `Usage: reposcan mcp [--server <url>] [--api-key <key>]

Serves reposcan's MCP (Model Context Protocol) tools on stdin and stdout, for an agent or an
editor that starts MCP servers as commands. Each tool calls the reposcan API at --server with
the API key, so the server's policy, limits and scan ownership apply; the tools are the ones the
API serves itself over HTTP at /mcp. Runs until stdin closes. stdout carries MCP messages only.

Tools: inspect_repository, scan_repository (waits up to 120 s), get_scan_status,
list_scan_files, read_scan_file, read_digest (a scan's output in pages of at most max_tokens
tokens, counted exactly, cut between files).

  --server <url>           the reposcan API (default: $REPOSCAN_SERVER or ${DEFAULT_SERVER})
  --api-key <key>          the API key of a server with keys (default: $REPOSCAN_API_KEY; put it
                           in the client's env block rather than its argument list)
  -h, --help               this help

A client configuration (Claude Desktop, Cursor and others read this shape):
  {"mcpServers": {"reposcan": {"command": "npx", "args": ["reposcan", "mcp"],
    "env": {"REPOSCAN_SERVER": "http://127.0.0.1:8000", "REPOSCAN_API_KEY": "rsk_…"}}}}
`;
