// The tools as an agent calls them (the SDK's own Client, in memory) over a backend made up here:
// what their text tells a client that reads only the text, and that it stays short whatever the
// size of the scan.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { ScanStatus, SummaryRecord } from '@reposcan/contracts';
import type { ReposcanBackend } from '../src/backend.js';
import { createReposcanMcpServer } from '../src/tools.js';
import { call } from './support/exercise-tools.js';
import { liteJson, madeSummary, SCAN_ID } from './support/made-scan.js';

const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

async function connect(backend: ReposcanBackend): Promise<Client> {
  const server = createReposcanMcpServer(backend, { version: '0.0.0' });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'reposcan-test', version: '1.0.0' });
  await client.connect(clientSide);
  clients.push(client);
  return client;
}

/** A scan of `files` and `assets` whose status is `status` (completed, its JSON output in one part, by default). */
function backendOf(
  files: Record<string, string>,
  assets: readonly string[] = [],
  status: ScanStatus = completedStatus(0),
): ReposcanBackend {
  const summary: SummaryRecord = madeSummary(files, assets);
  const json = Buffer.from(liteJson(files));
  const result = status.result;
  if (result?.artifacts.json && !result.artifacts.json.parts) result.artifacts.json.bytes = json.length;
  return {
    inspect: () => Promise.reject(new Error('no preview here')),
    scan: () => Promise.resolve(status),
    status: () => Promise.resolve(status),
    summary: () => Promise.resolve(summary),
    jsonArtifactRange: (_, __, start, end) => Promise.resolve(json.subarray(start, end)),
  };
}

/** A completed scan's status, its outputs in `parts` parts (0: whole), and lists as long as a large scan's. */
function completedStatus(parts: number): ScanStatus {
  const artifact = (format: string) => ({
    url: `/v1/download/${SCAN_ID}?format=${format}`,
    bytes: 1000 * Math.max(1, parts),
    sha256: 'a'.repeat(64),
    ...(parts === 0
      ? {}
      : {
          parts: Array.from({ length: parts }, (_, i) => ({
            part: i + 1,
            url: `/v1/download/${SCAN_ID}?format=${format}&part=${i + 1}`,
            bytes: 1000,
            sha256: 'b'.repeat(64),
            tokens: 250,
          })),
        }),
  });
  const finding = { path: 'src/config.ts', line: 3, column: 7, rule: 'github', kind: 'GITHUB_TOKEN' };
  return {
    scan_id: SCAN_ID,
    state: 'completed',
    source: { type: 'local', url: null },
    created_at: '2025-01-01T00:00:00.000Z',
    updated_at: '2025-01-01T00:01:00.000Z',
    started_at: '2025-01-01T00:00:01.000Z',
    completed_at: '2025-01-01T00:01:00.000Z',
    attempt: 1,
    progress: { phase: 'done', files_done: 5000, files_total: 5000 },
    error: null,
    status_url: `/v1/scans/${SCAN_ID}`,
    events_url: `/v1/scans/${SCAN_ID}/events`,
    result: {
      scan_id: SCAN_ID,
      repo_name: 'made',
      branch: null,
      commit: null,
      source: { type: 'local', url: null },
      num_textual_files: 5000,
      num_non_textual_files: 12,
      summary: {
        total_files: 5000,
        total_size: 4_000_000,
        tokens: 1_000_000,
        estimated_tokens: 1_000_000,
        file_type_breakdown: { code: 5000 },
        tokens_by_type: { code: 1_000_000 },
        files_with_replacements: 0,
        formatted: { total_size: '4.0 MB', tokens: '1.0M', estimated_tokens: '1.0M' },
      },
      artifacts: { txt: artifact('txt'), md: artifact('md'), json: artifact('json'), zip: artifact('zip') },
      artifact_dir: `scans/${SCAN_ID}`,
      skipped_count: 3,
      secrets: {
        mode: 'redact',
        count: parts * 2,
        findings: Array.from({ length: parts * 2 }, () => finding),
        not_checked: Array.from({ length: parts }, (_, i) => `big/${i}.json`),
      },
    },
  } as unknown as ScanStatus;
}

describe('get_scan_status and scan_repository', () => {
  it('keep their text and structured content short however many parts the scan has', async () => {
    const sizes: number[] = [];
    for (const parts of [2, 4000]) {
      const client = await connect(backendOf({}, [], completedStatus(parts)));
      for (const answer of [
        await call(client, 'get_scan_status', { scan_id: SCAN_ID }),
        await call(client, 'scan_repository', { repo_path: '/made', wait_seconds: 0 }),
      ]) {
        expect(answer.isError).toBeFalsy();
        const text = answer.content.map((c) => c.text ?? '').join('\n');
        const structured = JSON.stringify(answer.structuredContent);
        expect(text.length).toBeLessThan(4000);
        expect(structured.length).toBeLessThan(4000);
        sizes.push(text.length + structured.length);
        // What an agent needs to go on, in the text as in the structured content.
        expect(text).toContain(`Scan ${SCAN_ID} completed`);
        expect(text).toMatch(/5000 textual files/);
        expect(text).toMatch(/read_digest/);
        if (parts === 4000) expect(text).toMatch(/md: 4000 parts/);
        expect(answer.structuredContent).toMatchObject({
          scan_id: SCAN_ID,
          state: 'completed',
          progress: { phase: 'done' },
          error: null,
          result: {
            summary: { tokens: 1_000_000 },
            artifacts: { md: { parts, bytes: 1000 * parts, tokens: 250 * parts } },
            secrets: { mode: 'redact', count: parts * 2 },
          },
        });
      }
    }
    // The part counts have more digits, nothing more.
    expect(Math.max(...sizes.slice(2)) - Math.min(...sizes.slice(0, 2))).toBeLessThan(200);
  });

  it('say a failed scan failed, with its code, and a running scan where it is', async () => {
    const failed = {
      ...completedStatus(0),
      state: 'failed',
      result: null,
      error: { code: 'CLONE_FAILED', message: 'The repository could not be cloned.' },
    } as ScanStatus;
    const answer = await call(await connect(backendOf({}, [], failed)), 'get_scan_status', { scan_id: SCAN_ID });
    expect(answer.isError).toBe(true);
    expect(answer.content[0]?.text).toContain('failed: CLONE_FAILED: The repository could not be cloned.');
    expect(answer.structuredContent).toMatchObject({ state: 'failed', error: failed.error, result: null });
    const running = {
      ...completedStatus(0),
      state: 'running',
      result: null,
      progress: { phase: 'read', files_done: 10, files_total: 40 },
    } as ScanStatus;
    const later = await call(await connect(backendOf({}, [], running)), 'get_scan_status', { scan_id: SCAN_ID });
    expect(later.content[0]?.text).toMatch(/is running \(phase read, 10 of 40 files\)/);
    expect(later.structuredContent).toMatchObject({ state: 'running', progress: running.progress });
  });
});

describe('list_scan_files', () => {
  const files = { 'a.ts': 'a\n', 'src/b.ts': 'b\n', 'src/c.ts': 'c\n' };
  const assets = ['logo.png', 'src/icon.png', 'src/data.bin'];
  /** The paths a page's text lists, one a line after its first. */
  const listed = (text: string | undefined): string[] =>
    (text ?? '')
      .split('\n')
      .slice(1)
      .map((line) => line.split('\t')[0] as string);

  it('lists the non-textual files in its text too, under path_prefix, paged with the textual ones', async () => {
    const client = await connect(backendOf(files, assets));
    const all = await call(client, 'list_scan_files', { scan_id: SCAN_ID, include_non_textual: true });
    expect(listed(all.content[0]?.text)).toEqual([...Object.keys(files), ...assets]);
    expect(all.content[0]?.text).toMatch(/^3 textual files and 3 non-textual files; 6 from 0 \(the last\):\n/);
    expect(all.content[0]?.text).toContain('src/icon.png\timage\t100 B\tnon-textual');
    expect(all.structuredContent).toMatchObject({ total_files: 3, total_non_textual: 3, next_offset: null });

    const seen: string[] = [];
    let offset: number | null = 0;
    while (offset !== null) {
      const page = await call(client, 'list_scan_files', {
        scan_id: SCAN_ID,
        include_non_textual: true,
        path_prefix: 'src/',
        offset,
        limit: 3,
      });
      const data = page.structuredContent as {
        files: { path: string }[];
        non_textual: { path: string }[];
        next_offset: number | null;
      };
      const paths = [...data.files, ...data.non_textual].map((f) => f.path);
      expect(listed(page.content[0]?.text)).toEqual(paths);
      expect(paths.length).toBeLessThanOrEqual(3);
      seen.push(...paths);
      offset = data.next_offset;
    }
    expect(seen).toEqual(['src/b.ts', 'src/c.ts', 'src/icon.png', 'src/data.bin']);

    // Without include_non_textual, only the textual files, as before.
    const textual = await call(client, 'list_scan_files', { scan_id: SCAN_ID });
    expect(listed(textual.content[0]?.text)).toEqual(Object.keys(files));
    expect(textual.structuredContent).not.toHaveProperty('non_textual');
  });
});

describe('read_scan_file', () => {
  it('reads an empty file as one empty page', async () => {
    const client = await connect(backendOf({ 'empty.txt': '', 'a.ts': 'a\n' }));
    const page = await call(client, 'read_scan_file', { scan_id: SCAN_ID, path: 'empty.txt' });
    expect(page.isError).toBeFalsy();
    expect(page.content[0]?.text).toBe('');
    expect(page.structuredContent).toMatchObject({ tokens: 0, next_cursor: null, files: ['empty.txt'] });
  });
});

describe('arguments', () => {
  it('refuses one a tool does not take (a callback_url, a token) rather than drop it unseen', async () => {
    const client = await connect(backendOf({ 'a.md': 'a\n' }));
    const listed = (await client.listTools()).tools;
    for (const tool of listed) expect(tool.inputSchema.additionalProperties, tool.name).toBe(false);
    for (const [name, args] of [
      ['scan_repository', { repo_path: '/srv/repo', callback_url: 'https://ci.example.com/hook' }],
      ['inspect_repository', { repo_path: '/srv/repo', git_token: 'ghp_x' }],
      ['get_scan_status', { scan_id: SCAN_ID, colour: 'red' }],
    ] as const) {
      const answer = await call(client, name, args).catch((error: unknown) => ({
        isError: true,
        content: [{ type: 'text', text: String(error) }],
      }));
      expect(answer.isError, name).toBe(true);
      expect(answer.content[0]?.text, name).toMatch(/callback_url|git_token|colour/);
    }
  });
});
