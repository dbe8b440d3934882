import type { InspectRequest, InspectResult, ScanRequest, ScanStatus, SummaryRecord } from '@reposcan/contracts';

/** A scan request as a tool sends it: no git credential and no webhook travel through an agent. */
export type ToolScanRequest = Omit<ScanRequest, 'git_token' | 'callback_url'>;
export type ToolInspectRequest = Omit<InspectRequest, 'git_token'>;

/**
 * What the MCP tools need from reposcan. The API implements it over its services (the caller's
 * API key, rate limits and ownership applied as on the REST routes), the CLI over the typed HTTP
 * client; the tools never know which. A refusal is thrown as an error carrying `code` (an API
 * error code) and a sentence (`detail` or `message`).
 */
export interface ReposcanBackend {
  /** POST /v1/inspect: the preview; nothing is written. */
  inspect(request: ToolInspectRequest, signal: AbortSignal): Promise<InspectResult>;
  /** POST /v1/scan, then wait up to `waitMs` (0: not at all) for a terminal state; the status at the end. */
  scan(request: ToolScanRequest, waitMs: number, signal: AbortSignal): Promise<ScanStatus>;
  /** GET /v1/scans/{id}. */
  status(scanId: string, signal: AbortSignal): Promise<ScanStatus>;
  /** GET /v1/summary/{id}. */
  summary(scanId: string, signal: AbortSignal): Promise<SummaryRecord>;
  /** Bytes [start, end) of GET /v1/download/{id}?format=json[&part=N] (a range request). */
  jsonArtifactRange(
    scanId: string,
    part: number | undefined,
    start: number,
    end: number,
    signal: AbortSignal,
  ): Promise<Uint8Array>;
}
