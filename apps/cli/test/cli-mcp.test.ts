// `reposcan mcp` as an MCP client starts it: the SDK's StdioClientTransport spawns the real
// launcher, which speaks MCP on stdio to a real API with API keys. Every tool works with the key
// from the environment; without one each tool answers the API's refusal as a tool error.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '@reposcan/config';
import { startTestApi } from '../../../apps/api/test/support/test-runtime.js';
import type { TestApi } from '../../../apps/api/test/support/test-runtime.js';
import { codeBlocks, readmeSection, readReadme, REPO_ROOT } from '../../../apps/api/test/support/readme.js';
import {
  call,
  errorOf,
  exerciseTools,
  longFile,
  TOOL_NAMES,
} from '../../../packages/mcp/test/support/exercise-tools.js';
import { LAUNCHER, runCli } from './support/cli-process.js';

const key = generateApiKey();

/** An entry of README's `mcpServers`: a command to start, or an HTTP endpoint. */
interface ReadmeServer {
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  type?: string;
  url?: string;
  headers?: Record<string, string>;
}
let api: TestApi;
let work: string;

/** A client over `reposcan mcp …args`, with REPOSCAN_SERVER pointing at the test API. */
async function connect(args: string[], env: Record<string, string>): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [LAUNCHER, 'mcp', ...args],
    cwd: work,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: work,
      REPOSCAN_CLI_FROM_SOURCE: '1',
      REPOSCAN_SERVER: api.baseUrl,
      ...env,
    },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'reposcan-cli-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'reposcan-cli-mcp-'));
  api = await startTestApi({ API_KEYS: `agent:${key}` });
  await writeFile(join(api.repoDir, 'long.ts'), longFile());
});

afterAll(async () => {
  await api?.close();
  await rm(work, { recursive: true, force: true });
});

describe('reposcan mcp (stdio)', () => {
  it('serves every tool, backed by the server with the key from REPOSCAN_API_KEY', async () => {
    const client = await connect([], { REPOSCAN_API_KEY: key });
    try {
      const download = async (scanId: string, format: string): Promise<string> => {
        const response = await fetch(`${api.baseUrl}/v1/download/${scanId}?format=${format}`, {
          headers: { Authorization: `Bearer ${key}` },
        });
        expect(response.status).toBe(200);
        return response.text();
      };
      await exerciseTools(client, api.repoDir, download);
    } finally {
      await client.close();
    }
  });

  it('without a key, a tool answers the API refusal: its code and sentence', async () => {
    const client = await connect([], {});
    try {
      const refused = errorOf(await call(client, 'inspect_repository', { repo_path: api.repoDir }));
      expect(refused.code).toBe('API_KEY_MISSING');
      expect(refused.text).toContain('REPOSCAN_API_KEY');
    } finally {
      await client.close();
    }
  });

  it('a server that does not answer is a tool error naming it', async () => {
    const client = await connect(['--server', 'http://127.0.0.1:9'], { REPOSCAN_API_KEY: key });
    try {
      const refused = errorOf(
        await call(client, 'get_scan_status', { scan_id: '3f0c2a51-8d7e-4b1a-9c3e-2f6d5b4a1e90' }),
      );
      expect(refused.code).toBe('SERVER_UNREACHABLE');
      expect(refused.text).toContain('127.0.0.1:9');
    } finally {
      await client.close();
    }
  });

  it("README's client configuration works as written: both entries serve the tools its table lists", async () => {
    const readme = await readReadme();
    const block = codeBlocks(readme, 'json').find((text) => text.includes('"mcpServers"'));
    expect(block, 'README.md shows an mcpServers configuration').toBeDefined();
    const { mcpServers } = JSON.parse(block as string) as { mcpServers: Record<string, ReadmeServer> };
    // What a user fills in: the key for README's placeholder, this test's API for the server.
    const filled = (value: string): string =>
      value.replace('rsk_…', key).replace(/^http:\/\/127\.0\.0\.1:8000$/, api.baseUrl);
    const tableTools = [...readmeSection(readme, 'Agents (MCP)').matchAll(/^\| `([a-z_]+)` \|/gm)]
      .map((m) => m[1])
      .sort();
    expect(tableTools).toEqual(TOOL_NAMES);
    const transports = Object.values(mcpServers).map((server): Transport => {
      if (server.command !== undefined)
        return new StdioClientTransport({
          command: server.command,
          args: server.args ?? [],
          cwd: REPO_ROOT,
          env: {
            PATH: process.env.PATH ?? '',
            HOME: work,
            REPOSCAN_CLI_FROM_SOURCE: '1',
            ...Object.fromEntries(Object.entries(server.env ?? {}).map(([name, value]) => [name, filled(value)])),
          },
          stderr: 'pipe',
        });
      expect(server.type).toBe('http');
      const url = new URL(server.url as string);
      const headers = Object.fromEntries(
        Object.entries(server.headers ?? {}).map(([name, value]) => [name, filled(value)]),
      );
      return new StreamableHTTPClientTransport(new URL(url.pathname, api.baseUrl), { requestInit: { headers } });
    });
    expect(transports).toHaveLength(2);
    for (const transport of transports) {
      const client = new Client({ name: 'reposcan-readme-config', version: '1.0.0' });
      await client.connect(transport);
      try {
        expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(TOOL_NAMES);
        const preview = await call(client, 'inspect_repository', { repo_path: api.repoDir });
        expect(preview.isError).toBeFalsy();
        expect((preview.structuredContent?.files as { path: string }[]).map((f) => f.path)).toContain('long.ts');
      } finally {
        await client.close();
      }
    }
  });

  it('refuses a target or --local on the command line, with help', async () => {
    const target = await runCli(['mcp', '.'], { cwd: work });
    expect(target.code).toBe(2);
    expect(target.stderr).toContain('reposcan mcp takes no target');
    const local = await runCli(['mcp', '--local'], { cwd: work });
    expect(local.code).toBe(2);
    expect(local.stderr).toContain('talks to a reposcan server');
    const help = await runCli(['help', 'mcp'], { cwd: work });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: reposcan mcp');
  });
});
