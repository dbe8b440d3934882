import type { IncomingMessage, ServerResponse } from 'node:http';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

/**
 * One MCP message over streamable HTTP, stateless: a fresh server and transport per POST, no
 * session id. Any API process behind a load balancer can answer any request, and nothing is kept
 * between requests but what the volume holds; a long scan is followed with get_scan_status.
 * `body` is the JSON the server's body parser already read.
 */
export async function serveMcpHttpRequest(
  server: McpServer,
  req: IncomingMessage,
  res: ServerResponse,
  body: unknown,
): Promise<void> {
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  // The client gone (or the answer sent): end the server, which aborts a tool call still waiting.
  res.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, body);
}

/** Serves `server` on a process's stdin and stdout until stdin ends; resolves then. */
export async function serveMcpStdio(
  server: McpServer,
  stdin: NodeJS.ReadableStream,
  stdout: NodeJS.WritableStream,
): Promise<void> {
  const transport = new StdioServerTransport(stdin as never, stdout as never);
  const ended = new Promise<void>((resolve) => {
    stdin.once('end', resolve);
    stdin.once('close', resolve);
    transport.onclose = () => resolve();
  });
  await server.connect(transport);
  await ended;
  await server.close();
}
