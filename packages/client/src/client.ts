import { isTerminalState } from './api-types.js';
import type {
  ArtifactFormat,
  CleanupResult,
  ErrorEnvelope,
  Health,
  InspectRequest,
  InspectResult,
  Ready,
  ScanAccepted,
  ScanRequest,
  ScanResult,
  ScanStatus,
  SummaryRecord,
  UploadOptions,
  UploadQuery,
} from './api-types.js';
import { ReposcanApiError, ReposcanConnectionError } from './errors.js';
import { parseEventStream } from './sse.js';

export interface ReposcanClientOptions {
  /** Where the API listens, e.g. `http://127.0.0.1:8000` (a path prefix is kept). */
  baseUrl: string;
  /** Headers sent with every request (an auth header for a proxy in front, say). */
  headers?: Record<string, string>;
  /**
   * The API key (`rsk_…`) for a server with API keys on: sent as `Authorization: Bearer <key>`
   * on every request, event streams and downloads included. Leave it out for a server without keys.
   */
  apiKey?: string;
  /** A fetch implementation; the global one by default. */
  fetch?: typeof fetch;
}

export interface RequestOptions {
  signal?: AbortSignal;
}

export interface SubmitOptions extends RequestOptions {
  /** false (the default here) answers 202 at once; true lets the server wait up to SCAN_WAIT_SECONDS. */
  wait?: boolean;
}

/** What POST /v1/scan or /v1/upload answered: the finished result, or the accepted scan to follow. */
export type Submission = { kind: 'completed'; result: ScanResult } | { kind: 'accepted'; accepted: ScanAccepted };

/** A `state` or `progress` event of GET /v1/scans/{id}/events; `data` is the scan status. */
export interface ScanEvent {
  event: 'state' | 'progress';
  data: ScanStatus;
}

export interface Download {
  /** The artifact's bytes, streamed; read it once. */
  body: ReadableStream<Uint8Array>;
  contentType: string;
  /** Content-Length when the server sent one. */
  bytes: number | null;
  etag: string | null;
}

export interface FollowOptions extends RequestOptions {
  /** Reconnect attempts after a dropped stream before giving up (default 5). */
  maxReconnects?: number;
  /** Pause before a reconnect, in ms (default 1000). */
  reconnectDelayMs?: number;
}

type Envelope<T> = { status: 'success'; message: string; data: T; timestamp: string };

/**
 * A small fetch-based client over the types generated from openapi.yaml. Every error answer
 * becomes a {@link ReposcanApiError} (status, code, detail, request_id); no answer at all
 * becomes a {@link ReposcanConnectionError}. It runs wherever fetch and web streams exist.
 */
export class ReposcanClient {
  readonly baseUrl: string;
  readonly #headers: Record<string, string>;
  readonly #fetch: typeof fetch;

  constructor(options: ReposcanClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.#headers = {
      ...options.headers,
      ...(options.apiKey === undefined || options.apiKey === '' ? {} : { authorization: `Bearer ${options.apiKey}` }),
    };
    this.#fetch = options.fetch ?? ((input, init) => fetch(input, init));
  }

  /** POST /v1/scan: a remote repository URL or a path inside the server's ALLOWED_LOCAL_ROOTS. */
  async scan(body: ScanRequest, options: SubmitOptions = {}): Promise<Submission> {
    const response = await this.#request('POST', `/v1/scan${waitQuery(options.wait)}`, {
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json' },
      signal: options.signal,
    });
    return submission(response);
  }

  /** POST /v1/upload: a .zip archive in field `file`, the options as query parameters. */
  async upload(
    file: Blob,
    fileName: string,
    options: UploadOptions = {},
    submit: SubmitOptions = {},
  ): Promise<Submission> {
    const form = new FormData();
    form.append('file', file, fileName);
    const query = toQueryString({ ...uploadQuery(options), wait: submit.wait === true ? 'true' : 'false' });
    const response = await this.#request('POST', `/v1/upload?${query}`, { body: form, signal: submit.signal });
    return submission(response);
  }

  /** POST /v1/inspect: the preview (tree, files, estimated tokens); the server writes nothing. */
  async inspect(body: InspectRequest, options: RequestOptions = {}): Promise<InspectResult> {
    const response = await this.#request('POST', '/v1/inspect', {
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json' },
      signal: options.signal,
    });
    return (await readEnvelope<InspectResult>(response, [200])).data;
  }

  /** GET /v1/scans/{id}. */
  async status(scanId: string, options: RequestOptions = {}): Promise<ScanStatus> {
    const response = await this.#request('GET', `/v1/scans/${encodeURIComponent(scanId)}`, options);
    return (await readEnvelope<ScanStatus>(response, [200])).data;
  }

  /**
   * One connection to the scan's event stream (GET /v1/scans/{id}/events, or the `events_url`
   * of an accepted scan), yielding each `state` and `progress` event until the server closes it.
   */
  async *events(
    target: string | Pick<ScanAccepted, 'events_url'>,
    options: RequestOptions = {},
  ): AsyncGenerator<ScanEvent> {
    const path = typeof target === 'string' ? `/v1/scans/${encodeURIComponent(target)}/events` : target.events_url;
    const response = await this.#request('GET', path, {
      headers: { accept: 'text/event-stream' },
      signal: options.signal,
    });
    if (!response.ok) throw await apiError(response);
    if (!mediaType(response).startsWith('text/event-stream') || !response.body)
      throw await unexpected(response, 'an event stream');
    for await (const raw of parseEventStream(response.body)) {
      if (raw.event !== 'state' && raw.event !== 'progress') continue;
      yield { event: raw.event, data: JSON.parse(raw.data) as ScanStatus };
    }
  }

  /**
   * Follow a scan to its end: yields every event and returns after a terminal state. A stream
   * that drops early is reconnected (the status is read first, so a scan that ended meanwhile
   * still yields its final state).
   */
  async *follow(
    target: string | Pick<ScanAccepted, 'scan_id' | 'events_url'>,
    options: FollowOptions = {},
  ): AsyncGenerator<ScanEvent, ScanStatus> {
    const scanId = typeof target === 'string' ? target : target.scan_id;
    const maxReconnects = options.maxReconnects ?? 5;
    const delayMs = options.reconnectDelayMs ?? 1000;
    let failures = 0;
    for (;;) {
      try {
        for await (const event of this.events(target, options)) {
          failures = 0;
          yield event;
          if (event.event === 'state' && isTerminalState(event.data.state)) return event.data;
        }
      } catch (error) {
        // An API error (404 after a cleanup, say) is an answer, not a dropped stream.
        if (error instanceof ReposcanApiError || options.signal?.aborted || ++failures > maxReconnects) throw error;
      }
      const status = await this.status(scanId, options);
      if (isTerminalState(status.state)) {
        yield { event: 'state', data: status };
        return status;
      }
      await sleep(delayMs, options.signal);
    }
  }

  /**
   * GET /v1/download/{id}?format=…[&part=N]: the artifact (or its part N, for an output in parts)
   * as a byte stream; with `range`, only its bytes [start, end) (a 206 answer).
   */
  async download(
    scanId: string,
    format: ArtifactFormat,
    options: RequestOptions & { part?: number; range?: { start: number; end: number } } = {},
  ): Promise<Download> {
    const part = options.part === undefined ? '' : `&part=${options.part}`;
    const { range } = options;
    const response = await this.#request('GET', `/v1/download/${encodeURIComponent(scanId)}?format=${format}${part}`, {
      ...options,
      ...(range ? { headers: { Range: `bytes=${range.start}-${range.end - 1}` } } : {}),
    });
    if (response.status !== (range ? 206 : 200))
      throw response.ok ? await unexpected(response, 'the artifact') : await apiError(response);
    if (!response.body) throw await unexpected(response, 'the artifact');
    const length = response.headers.get('content-length');
    return {
      body: response.body,
      contentType: response.headers.get('content-type') ?? '',
      bytes: length === null ? null : Number(length),
      etag: response.headers.get('etag'),
    };
  }

  /** GET /v1/summary/{id}: the summary record of a completed scan. */
  async summary(scanId: string, options: RequestOptions = {}): Promise<SummaryRecord> {
    const response = await this.#request('GET', `/v1/summary/${encodeURIComponent(scanId)}`, options);
    return (await readEnvelope<SummaryRecord>(response, [200])).data;
  }

  /** DELETE /v1/cleanup/{id}: cancels a queued or running scan, then deletes it. */
  async cleanup(scanId: string, options: RequestOptions = {}): Promise<CleanupResult> {
    const response = await this.#request('DELETE', `/v1/cleanup/${encodeURIComponent(scanId)}`, options);
    return (await readEnvelope<CleanupResult>(response, [200])).data;
  }

  /** GET /health. */
  async health(options: RequestOptions = {}): Promise<Health> {
    const response = await this.#request('GET', '/health', options);
    if (response.status !== 200) throw await apiError(response);
    return readJson<Health>(response);
  }

  /** GET /ready: the readiness body, both when ready (200) and when not (503). */
  async ready(options: RequestOptions = {}): Promise<Ready> {
    const response = await this.#request('GET', '/ready', options);
    if (response.status !== 200 && response.status !== 503) throw await apiError(response);
    return readJson<Ready>(response);
  }

  async #request(
    method: string,
    path: string,
    init: { body?: RequestInit['body']; headers?: Record<string, string>; signal?: AbortSignal | undefined },
  ): Promise<Response> {
    // Links the API hands out (`events_url`, artifact `url`) are server-relative paths.
    const url = /^https?:\/\//i.test(path) ? path : this.baseUrl + path;
    try {
      return await this.#fetch(url, {
        method,
        body: init.body ?? null,
        headers: { ...this.#headers, ...init.headers },
        signal: init.signal ?? null,
      });
    } catch (error) {
      if (init.signal?.aborted) throw error;
      throw new ReposcanConnectionError(url, error);
    }
  }
}

function waitQuery(wait: boolean | undefined): string {
  return wait === true ? '' : '?wait=false';
}

/** Scan options as the upload's query parameters: booleans as `true`/`false`, numbers in digits, arrays repeated; unset and empty left out. */
function uploadQuery(options: UploadOptions): UploadQuery {
  const query: UploadQuery & Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(options) as Array<[string, UploadOptions[keyof UploadOptions]]>) {
    if (value === undefined || value === null) continue;
    if (Array.isArray(value)) {
      if (value.length > 0) query[name] = value;
    } else {
      query[name] = String(value);
    }
  }
  return query;
}

function toQueryString(query: Record<string, string | string[] | null | undefined>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    for (const item of Array.isArray(value) ? value : [value]) params.append(name, item);
  }
  return params.toString();
}

async function submission(response: Response): Promise<Submission> {
  if (response.status === 201)
    return { kind: 'completed', result: (await readEnvelope<ScanResult>(response, [201])).data };
  return { kind: 'accepted', accepted: (await readEnvelope<ScanAccepted>(response, [202])).data };
}

async function readEnvelope<T>(response: Response, expected: number[]): Promise<Envelope<T>> {
  if (!expected.includes(response.status))
    throw response.ok ? await unexpected(response, `HTTP ${expected.join(' or ')}`) : await apiError(response);
  const body = await readJson<Envelope<T>>(response);
  if (body?.status !== 'success' || !('data' in body)) throw unexpectedBody(response, 'a success envelope');
  return body;
}

async function readJson<T>(response: Response): Promise<T> {
  if (mediaType(response) !== 'application/json') throw await unexpected(response, 'JSON');
  try {
    return (await response.json()) as T;
  } catch {
    throw unexpectedBody(response, 'valid JSON');
  }
}

/** The error envelope of a non-success answer, or UNEXPECTED_RESPONSE when it is not one. */
async function apiError(response: Response): Promise<ReposcanApiError> {
  const text = await response.text().catch(() => '');
  const retryAfter = Number(response.headers.get('retry-after'));
  const common = {
    status: response.status,
    request_id: response.headers.get('x-request-id'),
    retry_after:
      Number.isFinite(retryAfter) && retryAfter >= 0 && response.headers.has('retry-after') ? retryAfter : null,
  };
  if (mediaType(response) === 'application/json') {
    try {
      const body = JSON.parse(text) as Partial<ErrorEnvelope>;
      if (body.status === 'error' && typeof body.code === 'string' && typeof body.detail === 'string') {
        return new ReposcanApiError({
          ...common,
          code: body.code,
          detail: body.detail,
          title: body.error ?? '',
          request_id: body.request_id ?? common.request_id,
          scan_id: body.data?.scan_id ?? null,
        });
      }
    } catch {
      // not JSON after all: reported below
    }
  }
  return new ReposcanApiError({
    ...common,
    code: 'UNEXPECTED_RESPONSE',
    title: response.statusText || `HTTP ${response.status}`,
    detail: `The server answered HTTP ${response.status} without an error envelope${snippet(text)}; check that the URL points at a reposcan API.`,
  });
}

async function unexpected(response: Response, wanted: string): Promise<ReposcanApiError> {
  if (!response.ok) return apiError(response);
  const text = await response.text().catch(() => '');
  return new ReposcanApiError({
    status: response.status,
    code: 'UNEXPECTED_RESPONSE',
    title: 'Unexpected response',
    request_id: response.headers.get('x-request-id'),
    detail: `Expected ${wanted}, got HTTP ${response.status} ${mediaType(response) || 'without a content type'}${snippet(text)}; check that the URL points at a reposcan API.`,
  });
}

function unexpectedBody(response: Response, wanted: string): ReposcanApiError {
  return new ReposcanApiError({
    status: response.status,
    code: 'UNEXPECTED_RESPONSE',
    title: 'Unexpected response',
    request_id: response.headers.get('x-request-id'),
    detail: `Expected ${wanted} from HTTP ${response.status}; check that the URL points at a reposcan API.`,
  });
}

function mediaType(response: Response): string {
  return (response.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
}

function snippet(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim().slice(0, 120);
  return line ? ` ("${line}${text.length > 120 ? '…' : ''}")` : '';
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
