// reposcan's MCP tools, defined once: the API serves them over streamable HTTP (/mcp), the CLI
// over stdio (`reposcan mcp`). Each supplies a ReposcanBackend; only this package imports the SDK.
export type { ReposcanBackend, ToolInspectRequest, ToolScanRequest } from './backend.js';
export { ScanDigest, counterFor, inProcessCounting, pooledCounting } from './digest.js';
export type { CountBatch, Page, TokenCounting } from './digest.js';
export {
  createReposcanMcpServer,
  DEFAULT_PAGE_TOKENS,
  DigestCache,
  MAX_PAGE_TOKENS,
  MAX_WAIT_SECONDS,
  MIN_PAGE_TOKENS,
} from './tools.js';
export type { McpToolsOptions } from './tools.js';
export { serveMcpHttpRequest, serveMcpStdio } from './transports.js';
