import { z } from 'zod';
import { ERROR_CODES } from './error-codes.js';
import type { ErrorCode } from './error-codes.js';
import { ERROR_STATUS } from './error-status.js';
import { ErrorEnvelope, HealthResponse, ReadyResponse, successEnvelope } from './envelope.js';
import { GIT_TOKEN_HEADER, InspectRequest, ScanRequest, UploadQuery } from './scan-options.js';
import { InspectResult, ScanAccepted, ScanResult, ScanStatus, SummaryRecord } from './scan-records.js';
import { ARTIFACT_FORMATS, SCAN_OPTIONS } from './vocabulary.js';

type Json = Record<string, unknown>;

/**
 * Builds the OpenAPI 3.1 document from the same zod schemas that validate requests, so the
 * checked-in openapi.yaml can never drift from the code (`npm run openapi:check`).
 */
export function buildOpenApiDocument(version: string): Json {
  const components: Record<string, Json> = {};
  const schema = (zod: z.ZodType, io: 'input' | 'output', name?: string): Json => {
    const json = z.toJSONSchema(zod, {
      target: 'draft-2020-12',
      io,
      unrepresentable: 'any',
      override: ({ jsonSchema }) => {
        // The ISO-8601 regex zod emits beside format: date-time is noise for readers.
        if (jsonSchema.format === 'date-time') delete jsonSchema.pattern;
      },
    }) as Json;
    const defs = (json.$defs ?? {}) as Record<string, Json>;
    delete json.$defs;
    delete json.$schema;
    for (const [id, def] of Object.entries(defs)) addComponent(id, def);
    // A schema with its own id comes back as a bare reference to itself.
    if (typeof json.$ref === 'string' && Object.keys(json).length === 1) return json;
    if (name) {
      addComponent(name, json);
      return { $ref: `#/components/schemas/${name}` };
    }
    return json;
  };
  const addComponent = (id: string, def: Json): void => {
    const text = JSON.stringify(def);
    const existing = components[id];
    if (existing && JSON.stringify(existing) !== text)
      throw new Error(`OpenAPI component ${id} has two different shapes`);
    components[id] = def;
  };

  const errorResponse = (codes: ErrorCode[]): Json => ({
    description: `Error envelope. Codes: ${codes.map((c) => `\`${c}\``).join(', ')}.`,
    content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
  });
  schema(ErrorEnvelope, 'output');
  // Refusals of the events endpoint alone: the other endpoints' answers do not list them.
  const streamCodes: readonly ErrorCode[] = ['TOO_MANY_EVENT_STREAMS', 'EVENT_STREAMS_FULL'];
  // The operator routes' refusal of a key without scope=admin.
  const opsCodes: readonly ErrorCode[] = ['ADMIN_KEY_REQUIRED'];
  const byStatus = (
    statuses: number[],
    codes: readonly ErrorCode[] = ERROR_CODES.filter((c) => !streamCodes.includes(c) && !opsCodes.includes(c)),
  ): Record<string, Json> => {
    const out: Record<string, Json> = {};
    for (const status of statuses)
      out[String(status)] = errorResponse(codes.filter((c) => ERROR_STATUS[c].status === status));
    return out;
  };
  const ok = (description: string, zod: z.ZodType, name: string): Json => ({
    description,
    content: { 'application/json': { schema: schema(successEnvelope(zod), 'output', name) } },
  });
  const scanIdParam = {
    name: 'scan_id',
    in: 'path',
    required: true,
    description: 'Server-made lowercase UUID. Anything else is a 400 before any file is touched.',
    schema: { type: 'string', format: 'uuid' },
  };
  const waitParams = [
    {
      name: 'wait',
      in: 'query',
      required: false,
      description: 'false answers 202 at once instead of waiting up to SCAN_WAIT_SECONDS.',
      schema: { type: 'boolean', default: true },
    },
    {
      name: 'Prefer',
      in: 'header',
      required: false,
      description: '`respond-async` answers 202 at once.',
      schema: { type: 'string', example: 'respond-async' },
    },
  ];
  const gitTokenHeader = {
    name: GIT_TOKEN_HEADER,
    in: 'header',
    required: false,
    description:
      'Credential for a private repository, for this request only, as `git_token` in the body (send one of them): a token, or `user:token`. See `git_token`.',
    schema: { type: 'string' },
  };
  const accepted = {
    description:
      'Accepted: still running after SCAN_WAIT_SECONDS (or asked not to wait). Follow `status_url` or `events_url`.',
    headers: { Location: { description: 'The status URL.', schema: { type: 'string' } } },
    content: {
      'application/json': { schema: schema(successEnvelope(ScanAccepted), 'output', 'ScanAcceptedResponse') },
    },
  };
  const artifactContent = {
    'text/plain; charset=utf-8': { schema: { type: 'string' } },
    'text/markdown; charset=utf-8': { schema: { type: 'string' } },
    'application/json': { schema: { type: 'object' } },
    'application/zip': { schema: { type: 'string', format: 'binary' } },
  };
  const uploadQuery = schema(UploadQuery, 'input') as { properties: Record<string, Json> };
  const uploadParams = Object.entries(uploadQuery.properties).map(([name, s]) => ({
    name,
    in: 'query',
    required: false,
    ...(typeof s.description === 'string' ? { description: s.description } : {}),
    schema: s,
    // A list may be repeated (`?exclude_dirs=a&exclude_dirs=b`) as well as comma-separated.
    ...(name in SCAN_OPTIONS && SCAN_OPTIONS[name as keyof typeof SCAN_OPTIONS].kind === 'list'
      ? { style: 'form', explode: true }
      : {}),
  }));

  // API keys are off unless the operator configures them: a request either carries one or needs none.
  const optionalKey = [{ apiKey: [] }, {}];

  const paths: Record<string, Json> = {
    '/v1/scan': {
      post: {
        operationId: 'createScan',
        summary: 'Scan a remote repository or a server-local path',
        description:
          'Scans and uploads share one per-client budget, RATE_LIMIT_PER_MINUTE (then 429 `RATE_LIMITED` with `Retry-After`); previews (POST /v1/inspect) never count against it.',
        parameters: [...waitParams, gitTokenHeader],
        requestBody: {
          required: true,
          content: { 'application/json': { schema: schema(ScanRequest, 'input', 'ScanRequest') } },
        },
        responses: {
          '201': ok('Completed within SCAN_WAIT_SECONDS: the scan result.', ScanResult, 'ScanResultResponse'),
          '202': accepted,
          ...byStatus([400, 403, 413, 415, 422, 429, 500, 502, 503, 504, 507]),
        },
      },
    },
    '/v1/upload': {
      post: {
        operationId: 'uploadScan',
        summary: 'Upload a .zip archive and scan it',
        description:
          'Counts against RATE_LIMIT_PER_MINUTE, the budget it shares with POST /v1/scan (then 429 `RATE_LIMITED` with `Retry-After`). An upload clones nothing: an `X-Git-Token` header or a `git_token` parameter is refused (400 `GIT_TOKEN_NOT_ACCEPTED`).',
        parameters: [...uploadParams, waitParams[1]],
        requestBody: {
          required: true,
          content: {
            'multipart/form-data': {
              schema: {
                type: 'object',
                required: ['file'],
                properties: {
                  file: { type: 'string', format: 'binary', description: 'The .zip archive (one file, field `file`).' },
                },
              },
            },
          },
        },
        responses: {
          '201': ok('Completed within SCAN_WAIT_SECONDS: the scan result.', ScanResult, 'ScanResultResponse'),
          '202': accepted,
          ...byStatus([400, 403, 413, 415, 422, 429, 500, 503, 504, 507]),
        },
      },
    },
    '/v1/inspect': {
      post: {
        operationId: 'inspect',
        summary: 'Preview a repository: tree, files, estimated tokens; writes nothing',
        description:
          'Previews have a per-client budget of their own, INSPECT_RATE_LIMIT_PER_MINUTE (then 429 `RATE_LIMITED` with `Retry-After`), separate from the one scans and uploads share, so previewing never uses up scanning; and INSPECT_CONCURRENCY slots per API process (then 429 `INSPECT_BUSY`, `Retry-After: 1`). A client that previews as a user types should send settled input only (on blur or Enter, or after a pause), drop answers to input that has changed since, and treat a 4xx for input still being typed as a hint rather than an error, as the web page does.',
        parameters: [gitTokenHeader],
        requestBody: {
          required: true,
          content: { 'application/json': { schema: schema(InspectRequest, 'input', 'InspectRequest') } },
        },
        responses: {
          '200': ok('The preview.', InspectResult, 'InspectResponse'),
          ...byStatus([400, 403, 413, 415, 422, 429, 500, 502, 504]),
        },
      },
    },
    '/v1/scans/{scan_id}': {
      get: {
        operationId: 'getScan',
        summary: 'State, progress, failure or result of a scan',
        parameters: [scanIdParam],
        responses: { '200': ok('The scan status.', ScanStatus, 'ScanStatusResponse'), ...byStatus([400, 404]) },
      },
    },
    '/v1/scans/{scan_id}/events': {
      get: {
        operationId: 'scanEvents',
        summary:
          'Server-sent events: `state` and `progress`, each with the scan status as data; closes after a terminal state',
        description:
          'A `state` event with the scan status at once, then one per state change and a `progress` event per progress change; a comment line every 15 s keeps idle connections open. ' +
          'Each client may hold MAX_EVENT_STREAMS_PER_CLIENT streams open (then 429 `TOO_MANY_EVENT_STREAMS`) and each API process MAX_EVENT_STREAMS (then 503 `EVENT_STREAMS_FULL`), both with `Retry-After`. ' +
          'When the API process stops, an open stream gets a last `stopping` event (`code` `SERVER_STOPPING`, `scan_id`, `detail`) with `retry: 1000` and is closed; the scan carries on, so reconnect to keep following it.',
        parameters: [scanIdParam],
        responses: {
          '200': { description: 'Event stream.', content: { 'text/event-stream': { schema: { type: 'string' } } } },
          ...byStatus([400, 404]),
          ...byStatus([429, 503], streamCodes),
        },
      },
    },
    '/v1/download/{scan_id}': {
      get: {
        operationId: 'download',
        summary: 'Download an artifact',
        description:
          'Every artifact is written front to back, once. `txt` and `md`: the repository and its directory tree, every textual file in walk order, ' +
          'then the non-textual files and the summary totals (files, size, tokens, tokens by type, skipped paths), which are known last. ' +
          '`json`: one object with `repository`, `encoding`, `tree`, `files`, then `summary`, `assets` and `skipped_count`. ' +
          'The tree draws every file the walk found: one that vanished before it was read is drawn and listed in `skipped` as `unreadable`. ' +
          'Lite outputs keep only the tree and the files. ' +
          'With `max_tokens_per_part` the txt, md and json outputs are in parts (listed in the result\'s `artifacts.<format>.parts`, each with its exact token count): ask for one with `part=N` (404 `PART_NOT_FOUND` past the last; without `part`, 409 `PART_REQUIRED`). Each part starts with a header naming the part and its files in tree order (json: one self-contained document per part, `{..., "files": [...], "part": N}`); part 1 holds the repository and the tree, the last part the totals; a file is cut only when it alone exceeds the budget, each piece marked `part k of n of this file` (json: `file_part`). ' +
          '`zip`: at the top the three outputs (or all their parts), `summary.json`, a `README.md` describing the bundle and `manifest.json` (size and sha256 of every other entry); under `repository/` the non-textual files of the repository, at their paths in it. Only `repository/` holds files of the repository, so its own `README.md`, `manifest.json` or `assets/` never take the place of the bundle entries of the same name.',
        parameters: [
          scanIdParam,
          { name: 'format', in: 'query', required: true, schema: { type: 'string', enum: [...ARTIFACT_FORMATS] } },
          {
            name: 'part',
            in: 'query',
            required: false,
            description: 'Which part (from 1) of an output cut by `max_tokens_per_part`; required for such an output.',
            schema: { type: 'integer', minimum: 1 },
          },
        ],
        responses: {
          '200': {
            description:
              'The artifact, with ETag and Content-Disposition: attachment; Range requests are honoured (206).',
            content: artifactContent,
          },
          // A byte range of the same artifact: its media type, but not a whole document.
          '206': {
            description: 'Partial content for a Range request: the requested bytes, with Content-Range.',
            content: Object.fromEntries(
              Object.keys(artifactContent).map((type) => [type, { schema: { type: 'string', format: 'binary' } }]),
            ),
          },
          '304': { description: 'Not modified: If-None-Match matched the ETag. No body.' },
          ...byStatus([400, 404, 409, 412, 416]),
        },
      },
    },
    '/v1/summary/{scan_id}': {
      get: {
        operationId: 'getSummary',
        summary: 'The summary record of a completed scan (never file contents)',
        parameters: [scanIdParam],
        responses: { '200': ok('The summary record.', SummaryRecord, 'SummaryResponse'), ...byStatus([400, 404, 409]) },
      },
    },
    '/v1/cleanup/{scan_id}': {
      delete: {
        operationId: 'cleanup',
        summary: 'Cancel the scan if it is queued or running, then delete it and all its artifacts',
        parameters: [scanIdParam],
        responses: {
          '200': ok('Deleted.', z.object({ scan_id: z.string() }), 'CleanupResponse'),
          ...byStatus([400, 404]),
        },
      },
    },
    '/health': {
      get: {
        operationId: 'health',
        summary: 'Liveness',
        responses: {
          '200': {
            description: 'Alive.',
            content: { 'application/json': { schema: schema(HealthResponse, 'output', 'Health') } },
          },
        },
      },
    },
    '/ready': {
      get: {
        operationId: 'ready',
        summary:
          'Readiness: a scan could be enqueued now (Redis takes writes in the queue keyspace, when used) and the volume is writable',
        responses: {
          '200': {
            description: 'Ready.',
            content: { 'application/json': { schema: schema(ReadyResponse, 'output', 'Ready') } },
          },
          '503': {
            description: 'Not ready.',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Ready' } } },
          },
        },
      },
    },
    '/metrics': {
      get: {
        operationId: 'metrics',
        summary: 'Prometheus metrics',
        description:
          'Request latency by route, scans accepted, queue waiting and active, inspect in flight; in the embedded mode and ROLE=all also the in-process worker: scans running and finished by state and code, files, bytes and tokens scanned, clone and scan durations. README, Operations, lists every metric. A ROLE=worker process serves its own on METRICS_PORT. ENABLE_QUEUE_DASHBOARD (with Redis) adds a read-only bull-board page at /admin/queues, outside this API description.',
        security: optionalKey,
        responses: {
          '200': { description: 'Prometheus text format.', content: { 'text/plain': { schema: { type: 'string' } } } },
          ...byStatus([401]),
          ...byStatus([403], opsCodes),
        },
      },
    },
  };

  // Every /v1 operation takes the key when the server has keys, and may answer 401 without one.
  for (const [path, item] of Object.entries(paths)) {
    if (!path.startsWith('/v1/')) continue;
    for (const operation of Object.values(item) as Json[]) {
      operation.security = optionalKey;
      const responses = { ...(operation.responses as Record<string, Json>), ...byStatus([401]) };
      operation.responses = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => (a < b ? -1 : 1)));
    }
  }

  const sorted = Object.fromEntries(Object.entries(components).sort(([a], [b]) => (a < b ? -1 : 1)));
  return {
    openapi: '3.1.0',
    info: {
      title: 'reposcan',
      version,
      description:
        'Scan code repositories (remote git URL, server-local path or uploaded ZIP) into LLM-ready txt/md/json artifacts and a ZIP bundle. ' +
        'Every JSON response is an envelope; errors carry a machine `code` and a `detail` that says what to do. ' +
        'Authentication is off by default (put the service behind a reverse proxy that authenticates, or turn API keys on). ' +
        'With API keys on (API_KEYS_FILE or API_KEYS), every /v1 request needs `Authorization: Bearer <key>` (else 401 `API_KEY_MISSING` or `API_KEY_INVALID`, with `WWW-Authenticate`); ' +
        'a scan belongs to the key that created it, and any other key (but one with scope=admin) gets 404 `SCAN_NOT_FOUND` for it. Rate limits then count per key. ' +
        "Agents: `POST /mcp` serves the same operations as Model Context Protocol tools over streamable HTTP (stateless; same API keys, budgets and ownership); it is not listed under paths, as its messages are JSON-RPC, not this document's operations.",
      license: { name: 'MIT' },
    },
    servers: [{ url: '/' }],
    paths: rewriteRefs(paths),
    components: {
      schemas: rewriteRefs(sorted) as Json,
      securitySchemes: {
        apiKey: {
          type: 'http',
          scheme: 'bearer',
          description:
            'An API key (`rsk_…`, made by `reposcan keys add`), when the server has keys: `Authorization: Bearer <key>`. Without keys configured no header is needed.',
        },
      },
    },
  };
}

function rewriteRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rewriteRefs);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [
        k,
        k === '$ref' && typeof v === 'string' ? v.replace('#/$defs/', '#/components/schemas/') : rewriteRefs(v),
      ]),
    );
  }
  return value;
}
