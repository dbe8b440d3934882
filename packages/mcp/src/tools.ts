import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { BranchName, PREVIEW_OPTION_NAMES, RepoPath, ScanError, ScanId, ScanOptionFields } from '@reposcan/contracts';
import type { ArtifactInfo, ScanStatus, SummaryRecord } from '@reposcan/contracts';
import { formatSize } from '@reposcan/core';
import type { ReposcanBackend } from './backend.js';
import { ScanDigest } from './digest.js';
import type { Page, ReadJson, TokenCounting } from './digest.js';

const TEXT_FORMATS = ['md', 'txt', 'json'] as const;

/** The longest a scan tool call waits for the scan to end; a longer scan is followed with get_scan_status. */
export const MAX_WAIT_SECONDS = 120;
export const DEFAULT_PAGE_TOKENS = 20_000;
export const MIN_PAGE_TOKENS = 200;
export const MAX_PAGE_TOKENS = 500_000;

export interface McpToolsOptions {
  /** The server's version, shown to clients at initialization. */
  version: string;
  /** Parsed outputs of recent scans, shared by the servers of one process (the API makes one per request). */
  digests?: DigestCache;
  /**
   * Where pages are counted: the API's token threads (`pooledCounting`), so its event loop
   * stays free; in-process by default.
   */
  counting?: TokenCounting;
  /**
   * An error that is not a refusal with a code (a bug, an unreachable server): what the agent is
   * told. The API logs it and says INTERNAL_ERROR; the CLI says what the client said.
   */
  unexpected?: (error: unknown) => { code: string; message: string };
}

/**
 * The digests of the last scans read, by scan and the SHA-256 of its JSON output: paging through
 * a scan indexes its output once. Bounded by what the digests hold (each its index, the records
 * and the tree, and the block texts it keeps from one page to the next); a digest alone over the
 * bound is served but not kept. Access is checked on every call all the same (the status is read
 * with the caller's rights before the cache is looked at).
 */
export class DigestCache {
  private readonly entries = new Map<string, { digest: Promise<ScanDigest>; bytes: number }>();
  private bytes = 0;
  constructor(private readonly maxBytes = 256 * 1024 * 1024) {}

  async get(key: string, load: () => Promise<{ digest: ScanDigest; bytes: number }>): Promise<ScanDigest> {
    const entry = this.entries.get(key);
    if (entry) {
      this.entries.delete(key);
      this.entries.set(key, entry);
      return entry.digest;
    }
    const loading = load();
    const digest = loading.then((l) => l.digest);
    // A failed load is thrown below (and to whoever waits on the entry), never left unhandled.
    digest.catch(() => undefined);
    // Calls for the same scan meanwhile wait for this load rather than start their own.
    const pending = { digest, bytes: 0 };
    this.entries.set(key, pending);
    try {
      const { bytes } = await loading;
      if (this.entries.get(key) !== pending) return await digest;
      if (bytes > this.maxBytes) {
        this.entries.delete(key);
        return await digest;
      }
      pending.bytes = bytes;
      this.bytes += bytes;
      for (const [k, e] of this.entries) {
        if (this.bytes <= this.maxBytes) break;
        if (k === key) continue;
        this.entries.delete(k);
        this.bytes -= e.bytes;
      }
      return await digest;
    } catch (error) {
      if (this.entries.get(key) === pending) this.entries.delete(key);
      throw error;
    }
  }
}

const scanOptionShape = ScanOptionFields;
const previewOptionShape = Object.fromEntries(PREVIEW_OPTION_NAMES.map((name) => [name, ScanOptionFields[name]])) as {
  [K in (typeof PREVIEW_OPTION_NAMES)[number]]: (typeof ScanOptionFields)[K];
};
const scanIdField = ScanId.describe('The scan_id that scan_repository returned.');
const maxTokensField = z
  .int()
  .min(MIN_PAGE_TOKENS)
  .max(MAX_PAGE_TOKENS)
  .default(DEFAULT_PAGE_TOKENS)
  .describe(
    `The most tokens this page may hold (exact count, in the scan's encoding); default ${DEFAULT_PAGE_TOKENS}. Choose what fits your remaining context.`,
  );
const cursorField = z
  .string()
  .max(64)
  .optional()
  .describe('Where to go on: the next_cursor of the previous page. Leave it out for the first page.');

/**
 * One MCP server with reposcan's tools over `backend`. The API makes one per HTTP request
 * (stateless), the CLI one per stdio session.
 */
export function createReposcanMcpServer(backend: ReposcanBackend, options: McpToolsOptions): McpServer {
  const server = new McpServer(
    { name: 'reposcan', version: options.version },
    {
      instructions:
        'reposcan turns a code repository into text for a language model. Typical use: inspect_repository to see size and token estimate, scan_repository to produce the outputs, then list_scan_files and read_scan_file for single files, or read_digest to read the whole repository page by page within a token budget.',
    },
  );
  const digests = options.digests ?? new DigestCache();
  const run = async (work: () => Promise<CallToolResult>): Promise<CallToolResult> => {
    try {
      return await work();
    } catch (error) {
      return toolError(error, options.unexpected);
    }
  };

  server.registerTool(
    'inspect_repository',
    {
      title: 'Preview a repository',
      description:
        'Preview what a scan of a repository would hold, without producing anything: the files that would be kept, their sizes and an estimate of their tokens, and the skipped paths. Cheap; use it to choose include/exclude options before scan_repository. repo_path is a repository URL (https or git@) or a folder the server allows.',
      inputSchema: z.strictObject({
        repo_path: RepoPath,
        branch: BranchName.optional(),
        ...previewOptionShape,
        max_tokens_per_part: ScanOptionFields.max_tokens_per_part,
      }),
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    (args, extra) =>
      run(async () => {
        const preview = await backend.inspect(args, extra.signal);
        return ok(
          `${preview.summary.total_files} files, ${preview.summary.formatted.total_size}, about ${preview.summary.formatted.estimated_tokens} tokens (estimate).`,
          preview,
        );
      }),
  );

  server.registerTool(
    'scan_repository',
    {
      title: 'Scan a repository',
      description: `Scan a repository into text outputs (txt, md and json) with exact token counts. Returns the scan's status: with wait_seconds > 0 the call waits up to that long (at most ${MAX_WAIT_SECONDS} s) for the scan to finish; a scan still queued or running then is followed with get_scan_status. Once completed, read it with read_digest, list_scan_files and read_scan_file.`,
      inputSchema: z.strictObject({
        repo_path: RepoPath,
        branch: BranchName.optional(),
        ...scanOptionShape,
        wait_seconds: z
          .int()
          .min(0)
          .max(MAX_WAIT_SECONDS)
          .default(60)
          .describe(
            `Seconds to wait for the scan to finish before answering (0: answer at once, queued); at most ${MAX_WAIT_SECONDS}.`,
          ),
      }),
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    ({ wait_seconds, ...request }, extra) =>
      run(async () => statusResult(await backend.scan(request, wait_seconds * 1000, extra.signal))),
  );

  server.registerTool(
    'get_scan_status',
    {
      title: 'Status of a scan',
      description:
        'The state of a scan (queued, running, completed, failed, cancelled), its progress, and when completed its totals and outputs; when failed, the error code and what to do.',
      inputSchema: z.strictObject({ scan_id: scanIdField }),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    ({ scan_id }, extra) => run(async () => statusResult(await backend.status(scan_id, extra.signal))),
  );

  /** A completed scan's summary and digest, with the caller's rights checked first. */
  const load = async (
    scanId: string,
    signal: AbortSignal,
  ): Promise<{ summary: SummaryRecord; digest: () => Promise<ScanDigest>; read: ReadJson }> => {
    const status = await backend.status(scanId, signal);
    assertCompleted(status);
    const summary = await backend.summary(scanId, signal);
    const json = status.result?.artifacts.json;
    const key = `${scanId}:${json?.sha256 ?? ''}`;
    // This call's own reads (its rights, its signal), also of a digest another call indexed.
    const read: ReadJson = (part, start, end) => backend.jsonArtifactRange(scanId, part, start, end, signal);
    return {
      summary,
      read,
      digest: () =>
        digests.get(key, async () => {
          const outputs = json?.parts?.map((p) => ({ part: p.part, bytes: p.bytes })) ?? [
            { part: undefined, bytes: json?.bytes ?? 0 },
          ];
          const digest = await ScanDigest.open(summary, outputs, read, options.counting);
          return { digest, bytes: digest.heldBytes };
        }),
    };
  };

  server.registerTool(
    'list_scan_files',
    {
      title: 'List the files of a scan',
      description:
        'The textual files a completed scan holds, in output order, with subcategory, size in bytes and exact token count; optionally its non-textual files (images, binaries: listed after the textual ones, never included as text). Use it to pick files for read_scan_file. Paged with offset and limit.',
      inputSchema: z.strictObject({
        scan_id: scanIdField,
        path_prefix: z
          .string()
          .max(4096)
          .optional()
          .describe('Only paths that begin with this (a folder such as `src/`).'),
        include_non_textual: z.boolean().default(false).describe('Also list the non-textual files.'),
        offset: z.int().min(0).default(0).describe('Files to pass over: the next_offset of the previous call.'),
        limit: z.int().min(1).max(2000).default(500).describe('Files to list at most.'),
      }),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    ({ scan_id, path_prefix, include_non_textual, offset, limit }, extra) =>
      run(async () => {
        const { summary } = await load(scan_id, extra.signal);
        const prefix = path_prefix ?? '';
        const files = summary.files.filter((f) => f.path.startsWith(prefix));
        const assets = include_non_textual ? summary.assets.filter((a) => a.path.startsWith(prefix)) : [];
        // One listing, the textual files then the non-textual ones, paged as a whole.
        const end = Math.min(offset + limit, files.length + assets.length);
        const page = files.slice(offset, end).map((f) => ({
          path: f.path,
          subcategory: f.subcategory,
          size_bytes: f.size_bytes,
          tokens: f.tokens,
        }));
        const pageAssets = assets
          .slice(Math.max(0, offset - files.length), Math.max(0, end - files.length))
          .map((a) => ({ path: a.path, subcategory: a.subcategory, size_bytes: a.size_bytes }));
        const next = end < files.length + assets.length ? end : null;
        const data = {
          scan_id,
          encoding: summary.encoding,
          total_files: files.length,
          ...(include_non_textual ? { total_non_textual: assets.length } : {}),
          total_tokens: files.reduce((n, f) => n + f.tokens, 0),
          offset,
          next_offset: next,
          files: page,
          ...(include_non_textual ? { non_textual: pageAssets } : {}),
        };
        const lines = [
          ...page.map((f) => `${f.path}\t${f.subcategory}\t${f.size_bytes} B\t${f.tokens} tokens`),
          ...pageAssets.map((a) => `${a.path}\t${a.subcategory}\t${a.size_bytes} B\tnon-textual`),
        ];
        const counts = `${files.length} textual files${include_non_textual ? ` and ${assets.length} non-textual files` : ''}`;
        return ok(
          `${counts}${prefix ? ` under ${prefix}` : ''}; ${lines.length} from ${offset}${next === null ? ' (the last)' : `, next_offset ${next}`}:\n${lines.join('\n')}`,
          data,
        );
      }),
  );

  server.registerTool(
    'read_scan_file',
    {
      title: 'Read one file of a scan',
      description:
        'The text of one file of a completed scan, as the outputs hold it (found secrets redacted). A file over max_tokens comes in pages cut at line ends: call again with next_cursor until it is null.',
      inputSchema: z.strictObject({
        scan_id: scanIdField,
        path: z.string().min(1).max(4096).describe('The path as list_scan_files gives it.'),
        max_tokens: maxTokensField,
        cursor: cursorField,
      }),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    ({ scan_id, path, max_tokens, cursor }, extra) =>
      run(async () => {
        const { digest, read } = await load(scan_id, extra.signal);
        return pageResult(await (await digest()).filePage(path, cursor ?? null, max_tokens, extra.signal, read), {
          scan_id,
          path,
        });
      }),
  );

  server.registerTool(
    'read_digest',
    {
      title: 'Read a scan page by page',
      description:
        "The whole output of a completed scan (repository, directory tree, every textual file, totals) in pages of at most max_tokens tokens, counted exactly. Pages end between files; only a file alone over the budget is cut, at a line end. Call again with next_cursor until it is null; put together, the pages are the scan's output in that format.",
      inputSchema: z.strictObject({
        scan_id: scanIdField,
        format: z
          .enum(TEXT_FORMATS)
          .default('md')
          .describe('md (Markdown, fenced code), txt (plain text between rules) or json (one object per file).'),
        max_tokens: maxTokensField,
        cursor: cursorField,
      }),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    ({ scan_id, format, max_tokens, cursor }, extra) =>
      run(async () => {
        const { digest, read } = await load(scan_id, extra.signal);
        return pageResult(await (await digest()).digestPage(format, cursor ?? null, max_tokens, extra.signal, read), {
          scan_id,
          format,
        });
      }),
  );

  return server;
}

function ok(text: string, data: object): CallToolResult {
  return { content: [{ type: 'text', text }], structuredContent: data as Record<string, unknown> };
}

/** An output in a status as the tools give it: its parts counted (their tokens summed), not listed. */
type OutputView = Omit<z.output<typeof ArtifactInfo>, 'parts'> & { parts?: number; tokens?: number };

/**
 * A status as the scan tools give it: whole but for the lists that grow with the scan (each
 * output's parts, the secrets found, the files not checked or not compressed), given as counts,
 * so that a scan in thousands of parts still answers in a few lines. read_digest reads every
 * part; GET /v1/scans/{id} lists them.
 */
function statusView(status: ScanStatus) {
  if (!status.result) return { ...status, result: null };
  const { artifacts, secrets, compression, ...result } = status.result;
  const outputs: Record<string, OutputView> = {};
  for (const [format, { parts, ...output }] of Object.entries(artifacts))
    outputs[format] = parts
      ? { ...output, parts: parts.length, tokens: parts.reduce((n, p) => n + p.tokens, 0) }
      : output;
  const { not_compressed, ...compressed } = compression ?? { not_compressed: [] };
  return {
    ...status,
    result: {
      ...result,
      artifacts: outputs,
      ...(secrets && {
        secrets: { mode: secrets.mode, count: secrets.count, not_checked_files: secrets.not_checked.length },
      }),
      ...(compression && { compression: { ...compressed, not_compressed_files: not_compressed.length } }),
    },
  };
}

/** A sentence on the scan and what to do next, then its status (statusView) for clients that read only text. */
function statusResult(status: ScanStatus): CallToolResult {
  const view = statusView(status);
  const r = view.result;
  let line: string;
  if (status.state === 'completed' && r) {
    const outputs = Object.entries(r.artifacts).map(
      ([format, o]) =>
        `${format}: ${o.parts === undefined ? formatSize(o.bytes) : `${o.parts} parts, ${formatSize(o.bytes)}, ${o.tokens} tokens`}`,
    );
    const secrets = r.secrets?.count ? ` ${r.secrets.count} secrets found (${r.secrets.mode}).` : '';
    line = `Scan ${status.scan_id} completed: ${r.num_textual_files} textual files, ${r.summary.formatted.total_size}, ${r.summary.tokens} tokens.${secrets} Outputs: ${outputs.join('; ')}. Read it with read_digest (the whole output in md, txt or json, page by page across its parts) or list_scan_files and read_scan_file.`;
  } else if (status.state === 'failed' && status.error)
    line = `Scan ${status.scan_id} failed: ${status.error.code}: ${status.error.message}`;
  else if (status.state === 'cancelled') line = `Scan ${status.scan_id} was cancelled; run it again to read it.`;
  else {
    const { phase, files_done, files_total } = status.progress;
    line = `Scan ${status.scan_id} is ${status.state} (phase ${phase}, ${files_done} of ${files_total} files); ask get_scan_status again shortly.`;
  }
  return { ...ok(`${line}\n${JSON.stringify(view)}`, view), isError: status.state === 'failed' };
}

function pageResult(page: Page, about: Record<string, string>): CallToolResult {
  const meta = {
    ...about,
    tokens: page.tokens,
    files: page.files,
    cut_inside_file: page.cut_inside_file,
    next_cursor: page.next_cursor,
  };
  const after =
    page.next_cursor === null
      ? 'This was the last page.'
      : `More follows: call again with cursor "${page.next_cursor}".`;
  return {
    content: [
      { type: 'text', text: page.text },
      { type: 'text', text: `[${page.tokens} tokens. ${after}]` },
    ],
    structuredContent: meta,
  };
}

/** The refusal as an MCP tool error: the API's machine code and its sentence, as REST would say them. */
function assertCompleted(status: ScanStatus): void {
  if (status.state === 'completed') return;
  if (status.state === 'failed')
    throw new ScanError(
      'SCAN_FAILED',
      `Scan ${status.scan_id} failed (${status.error?.code ?? 'unknown'}): ${status.error?.message ?? 'no detail'}`,
    );
  if (status.state === 'cancelled')
    throw new ScanError('SCAN_CANCELLED', `Scan ${status.scan_id} was cancelled; run it again to read it.`);
  throw new ScanError(
    'SCAN_NOT_READY',
    `Scan ${status.scan_id} is ${status.state} (phase ${status.progress.phase}); wait for it with get_scan_status, then ask again.`,
  );
}

function toolError(
  error: unknown,
  unexpected: McpToolsOptions['unexpected'] = (e) => ({ code: 'INTERNAL_ERROR', message: String(e) }),
): CallToolResult {
  const fields = error as { code?: unknown; detail?: unknown; message?: unknown };
  const coded =
    typeof error === 'object' && error !== null && typeof fields.code === 'string'
      ? {
          code: fields.code,
          message: String(typeof fields.detail === 'string' ? fields.detail : fields.message),
        }
      : unexpected(error);
  return {
    isError: true,
    content: [{ type: 'text', text: `${coded.code}: ${coded.message}` }],
    structuredContent: { error: coded },
  };
}
