// The MCP endpoint as an agent meets it: the SDK's own client over streamable HTTP against a real
// API with API keys. Every tool works with a key, nothing without one, and a scan is its
// creator's over MCP as over REST, and its scans spend from the same budget as POST /v1/scan.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '@reposcan/config';
import { call, errorOf, exerciseTools, longFile } from '../../../packages/mcp/test/support/exercise-tools.js';
import { startTestApi } from './support/test-runtime.js';
import type { TestApi } from './support/test-runtime.js';

const alice = generateApiKey();
const bob = generateApiKey();
let api: TestApi;

async function connect(key: string | null): Promise<Client> {
  const client = new Client({ name: 'reposcan-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${api.baseUrl}/mcp`), {
    requestInit: key === null ? {} : { headers: { Authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);
  return client;
}

beforeAll(async () => {
  api = await startTestApi({ API_KEYS: `alice:${alice},bob:${bob}` });
  await writeFile(join(api.repoDir, 'long.ts'), longFile());
});

afterAll(async () => {
  await api?.close();
});

describe('MCP over streamable HTTP', () => {
  it('serves every tool to a key, and the pages are the downloads', async () => {
    const client = await connect(alice);
    try {
      const download = async (scanId: string, format: string): Promise<string> => {
        const response = await fetch(`${api.baseUrl}/v1/download/${scanId}?format=${format}`, {
          headers: { Authorization: `Bearer ${alice}` },
        });
        expect(response.status).toBe(200);
        return response.text();
      };
      const scanId = await exerciseTools(client, api.repoDir, download);

      // Another key is told the scan does not exist, by every tool that reads it.
      const other = await connect(bob);
      try {
        for (const tool of ['get_scan_status', 'list_scan_files', 'read_digest']) {
          const refused = errorOf(await call(other, tool, { scan_id: scanId }));
          expect(refused.code).toBe('SCAN_NOT_FOUND');
        }
      } finally {
        await other.close();
      }
    } finally {
      await client.close();
    }
  });

  it("counts a large page off the API's event loop", async () => {
    // About 1.5 MB of varied source (no word repeats much, as in real code): counted on the event
    // loop, one 400 000-token page held it for most of a second.
    const big = join(api.localRoot, 'big');
    await mkdir(big, { recursive: true });
    let seed = 7;
    const word = (): string => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed.toString(36);
    };
    for (let i = 0; i < 200; i++)
      await writeFile(
        join(big, `f${i}.ts`),
        Array.from(
          { length: 150 },
          () => `export const ${word()} = ${word()}(${word()}, '${word()} ${word()}');\n`,
        ).join(''),
      );
    const client = await connect(alice);
    try {
      const scanned = await call(client, 'scan_repository', { repo_path: big, wait_seconds: 60 });
      expect(scanned.structuredContent?.state).toBe('completed');
      const scanId = scanned.structuredContent?.scan_id as string;
      // The first page loads the output and the counting tables; what is measured is the next one.
      await call(client, 'read_digest', { scan_id: scanId, format: 'md', max_tokens: 200 });
      const histogram = monitorEventLoopDelay({ resolution: 10 });
      histogram.enable();
      // Its first tick only starts the measure: a loop blocked before it would go unseen.
      await new Promise((resolve) => setTimeout(resolve, 30));
      const page = await call(client, 'read_digest', { scan_id: scanId, format: 'md', max_tokens: 500_000 });
      await new Promise((resolve) => setTimeout(resolve, 30)); // a loop blocked to the end, recorded
      histogram.disable();
      expect(page.structuredContent?.tokens).toBeGreaterThan(300_000);
      expect(histogram.max / 1e6).toBeLessThan(100);
    } finally {
      await client.close();
    }
  });

  it('refuses a client without a key with 401, as /v1', async () => {
    const error = await connect(null).then(
      () => null,
      (e: unknown) => e as { code?: unknown; message: string },
    );
    expect(error?.code).toBe(401);
    expect(error?.message).toContain('This server needs an API key');
    const wrong = await connect('rsk_not-a-key').then(
      () => null,
      (e: unknown) => e as { code?: unknown },
    );
    expect(wrong?.code).toBe(401);
  });

  it('answers GET with 405: the endpoint is stateless and keeps no stream open', async () => {
    const response = await fetch(`${api.baseUrl}/mcp`, {
      headers: { Authorization: `Bearer ${alice}`, Accept: 'text/event-stream' },
    });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
  });

  it('answers a body it cannot read with a JSON-RPC error, as the SDK does, and /v1 with its envelope', async () => {
    const post = (path: string, body: string): Promise<Response> =>
      fetch(`${api.baseUrl}${path}`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${alice}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body,
      });
    const malformed = await post('/mcp', '{bad');
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toEqual({
      jsonrpc: '2.0',
      error: { code: -32700, message: 'Parse error: Invalid JSON' },
      id: null,
    });
    // JSON that is no JSON-RPC message reaches the SDK, which answers in the same shape.
    const notMessage = await post('/mcp', '{"foo":1}');
    expect(notMessage.status).toBe(400);
    expect(await notMessage.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32700 }, id: null });
    // Over MAX_JSON_BODY_BYTES (64 KiB here), as the SDK says of a body over its own bound.
    const large = await post('/mcp', JSON.stringify({ padding: 'x'.repeat(70_000) }));
    expect(large.status).toBe(413);
    expect(await large.json()).toEqual({
      jsonrpc: '2.0',
      error: { code: -32000, message: 'Payload Too Large: Request body must not exceed 65536 bytes' },
      id: null,
    });
    // The REST routes keep their envelope.
    const rest = await post('/v1/scan', '{bad');
    expect(rest.status).toBe(400);
    expect(await rest.json()).toMatchObject({ status: 'error', code: 'INVALID_JSON' });
  });

  it('spends from the same scan budget as POST /v1/scan', async () => {
    const limited = await startTestApi({ RATE_LIMIT_PER_MINUTE: '2' });
    const client = new Client({ name: 'reposcan-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${limited.baseUrl}/mcp`)));
    try {
      const rest = (): Promise<Response> =>
        fetch(`${limited.baseUrl}/v1/scan?wait=false`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ repo_path: limited.repoDir }),
        });
      expect((await rest()).status).toBe(202);
      const second = await call(client, 'scan_repository', { repo_path: limited.repoDir, wait_seconds: 0 });
      expect(second.isError).toBeFalsy();
      const third = errorOf(await call(client, 'scan_repository', { repo_path: limited.repoDir, wait_seconds: 0 }));
      expect(third.code).toBe('RATE_LIMITED');
      expect(third.text).toMatch(/\(limit 2 per minute\)\. Retry after \d+ s\./);
      expect((await rest()).status).toBe(429);
      // Reading spends nothing.
      const status = await call(client, 'get_scan_status', { scan_id: second.structuredContent?.scan_id });
      expect(status.structuredContent?.scan_id).toBe(second.structuredContent?.scan_id);
    } finally {
      await client.close();
      await limited.close();
    }
  });
});
