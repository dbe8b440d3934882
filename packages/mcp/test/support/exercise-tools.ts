// Every reposcan MCP tool called through the SDK's own Client, as an agent would, over whichever
// transport the caller connected: what the agent sees is checked against the files on disk, the
// REST downloads and js-tiktoken's counts.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Tiktoken } from 'js-tiktoken/lite';
import o200kRanks from 'js-tiktoken/ranks/o200k_base';
import { expect } from 'vitest';

const tiktoken = new Tiktoken(o200kRanks);
const tokens = (text: string): number => tiktoken.encode(text, [], []).length;
const RULE = '='.repeat(64);

export const TOOL_NAMES = [
  'get_scan_status',
  'inspect_repository',
  'list_scan_files',
  'read_digest',
  'read_scan_file',
  'scan_repository',
];

interface ToolAnswer {
  isError?: boolean;
  content: { type: string; text?: string }[];
  structuredContent?: Record<string, unknown>;
}

export async function call(client: Client, name: string, args: Record<string, unknown>): Promise<ToolAnswer> {
  return (await client.callTool({ name, arguments: args })) as ToolAnswer;
}

/** A tool error's code and sentence, as the agent reads them. */
export function errorOf(answer: ToolAnswer): { code: string; text: string } {
  expect(answer.isError).toBe(true);
  const text = answer.content[0]?.text ?? '';
  return { code: (answer.structuredContent?.error as { code: string }).code, text };
}

/** A long file with many lines, so a small budget must cut it at line ends. */
export function longFile(): string {
  return Array.from({ length: 400 }, (_, i) => `export const value${i} = ${i} * 17; // line ${i} of a long file`).join(
    '\n',
  );
}

/**
 * Runs every tool on `repoDir` (a copy of the sample repository with `long.ts` written by
 * longFile). `download(scanId, format)` fetches the artifact over REST, for comparison.
 * Returns the completed scan's id.
 */
export async function exerciseTools(
  client: Client,
  repoDir: string,
  download: (scanId: string, format: 'txt' | 'md' | 'json') => Promise<string>,
): Promise<string> {
  const tools = await client.listTools();
  expect(tools.tools.map((t) => t.name).sort()).toEqual(TOOL_NAMES);
  for (const tool of tools.tools) {
    expect(tool.description?.length).toBeGreaterThan(80);
    expect(tool.inputSchema.type).toBe('object');
  }
  const readDigest = tools.tools.find((t) => t.name === 'read_digest');
  expect(Object.keys(readDigest?.inputSchema.properties ?? {})).toEqual(['scan_id', 'format', 'max_tokens', 'cursor']);

  // A preview: nothing written, the files listed.
  const preview = await call(client, 'inspect_repository', { repo_path: repoDir, exclude_patterns: ['*.csv'] });
  expect(preview.isError).toBeFalsy();
  const previewFiles = (preview.structuredContent?.files as { path: string }[]).map((f) => f.path);
  expect(previewFiles).toContain('long.ts');
  expect(previewFiles).not.toContain('data/table.csv');

  // Bad input is the API's refusal, code and sentence.
  const refused = errorOf(await call(client, 'scan_repository', { repo_path: '/nowhere/at/all', wait_seconds: 0 }));
  expect(refused.code).toBe('OUTSIDE_ALLOWED_ROOTS');
  expect(refused.text).toMatch(/^OUTSIDE_ALLOWED_ROOTS: .+ALLOWED_LOCAL_ROOTS/);

  // Not waiting: queued or running at once (or, on a fast machine, already done).
  const quick = await call(client, 'scan_repository', { repo_path: repoDir, wait_seconds: 0 });
  expect(quick.isError).toBeFalsy();
  expect(['queued', 'running', 'completed']).toContain(quick.structuredContent?.state);

  const scanned = await call(client, 'scan_repository', { repo_path: repoDir, wait_seconds: 60 });
  expect(scanned.isError).toBeFalsy();
  expect(scanned.structuredContent?.state).toBe('completed');
  const scanId = scanned.structuredContent?.scan_id as string;
  expect(scanned.content[0]?.text).toContain(`Scan ${scanId} completed`);

  const status = await call(client, 'get_scan_status', { scan_id: scanId });
  expect(status.structuredContent).toMatchObject({ scan_id: scanId, state: 'completed' });

  // The file list, paged.
  const listed = await call(client, 'list_scan_files', { scan_id: scanId, limit: 3 });
  expect(listed.structuredContent).toMatchObject({ offset: 0, next_offset: 3 });
  const all = await call(client, 'list_scan_files', { scan_id: scanId, limit: 2000, include_non_textual: true });
  const files = all.structuredContent?.files as { path: string; tokens: number }[];
  expect(files.slice(0, 3)).toEqual(listed.structuredContent?.files);
  expect(all.structuredContent?.next_offset).toBeNull();
  expect((all.structuredContent?.non_textual as { path: string }[]).map((a) => a.path)).toContain('assets/logo.png');
  // A client that reads only the text sees them too.
  expect(all.content[0]?.text).toContain('\nassets/logo.png\timage\t');
  const srcOnly = await call(client, 'list_scan_files', { scan_id: scanId, path_prefix: 'src/' });
  expect((srcOnly.structuredContent?.files as { path: string }[]).every((f) => f.path.startsWith('src/'))).toBe(true);

  // One file: whole, then the long one in pages cut at line ends, each within its budget.
  const readme = await call(client, 'read_scan_file', { scan_id: scanId, path: 'README.md' });
  expect(readme.content[0]?.text).toBe(await readFile(join(repoDir, 'README.md'), 'utf8'));
  expect(readme.structuredContent?.next_cursor).toBeNull();
  const long = await readFile(join(repoDir, 'long.ts'), 'utf8');
  const longTokens = files.find((f) => f.path === 'long.ts')?.tokens ?? 0;
  expect(longTokens).toBe(tokens(long));
  let cursor: string | null = null;
  let joined = '';
  let pages = 0;
  do {
    const page = await call(client, 'read_scan_file', {
      scan_id: scanId,
      path: 'long.ts',
      max_tokens: 1000,
      ...(cursor === null ? {} : { cursor }),
    });
    const text = page.content[0]?.text ?? '';
    expect(page.structuredContent?.tokens).toBe(tokens(text));
    expect(tokens(text)).toBeLessThanOrEqual(1000);
    cursor = page.structuredContent?.next_cursor as string | null;
    if (cursor !== null) expect(text.endsWith('\n')).toBe(true);
    joined += text;
    pages++;
  } while (cursor !== null);
  expect(joined).toBe(long);
  expect(pages).toBeGreaterThanOrEqual(Math.ceil(longTokens / 1000));

  const missing = errorOf(await call(client, 'read_scan_file', { scan_id: scanId, path: 'no/such/file.ts' }));
  expect(missing.code).toBe('INVALID_REQUEST');
  expect(missing.text).toContain('list_scan_files');

  // The digest in every format: pages within the budget, exact counts, cut between files, and
  // together the very output the REST download gives.
  for (const format of ['txt', 'md', 'json'] as const) {
    const artifact = await download(scanId, format);
    let at: string | null = null;
    let whole = '';
    let previousCut = false;
    let count = 0;
    do {
      const page = await call(client, 'read_digest', {
        scan_id: scanId,
        format,
        max_tokens: 1500,
        ...(at === null ? {} : { cursor: at }),
      });
      expect(page.isError).toBeFalsy();
      const text = page.content[0]?.text ?? '';
      const exact = tokens(text);
      expect(page.structuredContent?.tokens).toBe(exact);
      expect(exact).toBeLessThanOrEqual(1500);
      expect(page.content[1]?.text).toContain(`${exact} tokens`);
      // A page that does not go on inside a cut file starts at a block: a file's header (or the totals).
      if (format === 'txt' && count > 0 && !previousCut) expect(text.startsWith(`${RULE}\n`)).toBe(true);
      if (format === 'json' && count > 0 && !previousCut) expect(text).toMatch(/^( {4}\{"path":|\n {2}\])/);
      previousCut = page.structuredContent?.cut_inside_file === true;
      at = page.structuredContent?.next_cursor as string | null;
      whole += text;
      count++;
    } while (at !== null);
    expect(whole).toBe(artifact);
    expect(count).toBeGreaterThan(2);
  }

  const badCursor = errorOf(await call(client, 'read_digest', { scan_id: scanId, cursor: '999.0' }));
  expect(badCursor.code).toBe('INVALID_REQUEST');
  const unknown = errorOf(await call(client, 'get_scan_status', { scan_id: '3f0c2a51-8d7e-4b1a-9c3e-2f6d5b4a1e90' }));
  expect(unknown.code).toBe('SCAN_NOT_FOUND');
  return scanId;
}
