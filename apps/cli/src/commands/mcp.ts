import { ReposcanClient, ReposcanConnectionError, ReposcanIntegrityError } from '@reposcan/client';
import { createReposcanMcpServer, pooledCounting, serveMcpStdio } from '@reposcan/mcp';
import type { ReposcanBackend } from '@reposcan/mcp';
import type { McpArgs } from '../cli-args.js';
import type { CliIo } from '../cli-io.js';

/**
 * `reposcan mcp`: the MCP tools on stdio, each a call to the server through the typed client,
 * with the API key, so the server's policy, budgets and ownership apply as to any client.
 */
export async function mcp(args: McpArgs, io: CliIo, version: string): Promise<void> {
  if (!io.streams) throw new Error('reposcan mcp needs the process streams');
  const client = new ReposcanClient({
    baseUrl: args.server,
    ...(args.apiKey === undefined ? {} : { apiKey: args.apiKey }),
  });
  // Pages are counted on a token thread as in the API, so the stdio loop still answers a
  // cancellation or a ping while a large page is counted.
  const counting = pooledCounting(1);
  const server = createReposcanMcpServer(clientBackend(client), {
    version,
    counting: counting.counting,
    unexpected: (error) =>
      error instanceof ReposcanConnectionError
        ? { code: 'SERVER_UNREACHABLE', message: `${error.message}; check --server or REPOSCAN_SERVER.` }
        : error instanceof ReposcanIntegrityError
          ? { code: 'UNEXPECTED_RESPONSE', message: error.message }
          : { code: 'INTERNAL_ERROR', message: error instanceof Error ? error.message : String(error) },
  });
  io.stderr.write(`reposcan mcp: serving on stdio, server ${client.baseUrl}\n`);
  try {
    await serveMcpStdio(server, io.streams.stdin, io.streams.stdout);
  } finally {
    await counting.close();
  }
}

export function clientBackend(client: ReposcanClient): ReposcanBackend {
  return {
    inspect: (request, signal) => client.inspect(request, { signal }),
    async scan(request, waitMs, signal) {
      const submission = await client.scan(request, { wait: false, signal });
      const scanId = submission.kind === 'completed' ? submission.result.scan_id : submission.accepted.scan_id;
      if (submission.kind === 'accepted' && waitMs > 0) {
        const timer = AbortSignal.timeout(waitMs);
        try {
          // Every event read and dropped: the status after it is the answer.
          for await (const _ of client.follow(submission.accepted, { signal: AbortSignal.any([signal, timer]) }));
        } catch (error) {
          if (!timer.aborted || signal.aborted) throw error;
        }
      }
      return client.status(scanId, { signal });
    },
    status: (scanId, signal) => client.status(scanId, { signal }),
    summary: (scanId, signal) => client.summary(scanId, { signal }),
    async jsonArtifactRange(scanId, part, start, end, signal) {
      const download = await client.download(scanId, 'json', {
        signal,
        range: { start, end },
        ...(part === undefined ? {} : { part }),
      });
      return new Uint8Array(await new Response(download.body).arrayBuffer());
    },
  };
}
