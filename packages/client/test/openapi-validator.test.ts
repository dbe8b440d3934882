// The contract test is only as strict as its validator: each way a response can stray from
// openapi.yaml must be caught here, on hand-made responses.
import { describe, expect, it } from 'vitest';
import { OpenApiValidator } from './support/openapi-validator.js';

const spec = await OpenApiValidator.load(new URL('../../../openapi.yaml', import.meta.url));

/**
 * A Response-shaped answer. Not `new Response`: it adds a content type to string bodies and
 * refuses a body on 304, and both are exactly what the validator must be shown.
 */
function respond(
  status: number,
  body: string | null,
  contentType?: string,
  headers: Record<string, string> = {},
): Response {
  const bytes = new TextEncoder().encode(body ?? '');
  return {
    status,
    headers: new Headers({ ...(contentType ? { 'content-type': contentType } : {}), ...headers }),
    arrayBuffer: () => Promise.resolve(bytes.buffer),
  } as Response;
}
const health = JSON.stringify({ status: 'ok', version: '1.0.0' });

describe('OpenApiValidator', () => {
  it('accepts a response the spec describes, with media-type parameters on a bare declared type', async () => {
    const checked = await spec.check('GET', '/health', respond(200, health, 'application/json; charset=utf-8'));
    expect(checked.body).toEqual({ status: 'ok', version: '1.0.0' });
  });

  it('refuses an operation the spec does not list', async () => {
    await expect(spec.check('PUT', '/health', respond(200, health, 'application/json'))).rejects.toThrow(
      /no operation PUT \/health/,
    );
    await expect(spec.check('GET', '/v1/nothing', respond(200, health, 'application/json'))).rejects.toThrow(
      /no operation/,
    );
  });

  it('refuses a status the operation does not list', async () => {
    await expect(spec.check('GET', '/health', respond(418, health, 'application/json'))).rejects.toThrow(
      /status 418 is not described/,
    );
  });

  it('refuses a content type the status does not declare, or none at all', async () => {
    await expect(spec.check('GET', '/health', respond(200, '<p>ok</p>', 'text/html'))).rejects.toThrow(
      /Content-Type text\/html is not described/,
    );
    await expect(spec.check('GET', '/health', respond(200, health))).rejects.toThrow(/no Content-Type/);
    // A declared charset must be there: text/plain alone is not `text/plain; charset=utf-8`.
    const id = '3f0c2a51-8d7e-4b1a-9c3e-2f6d5b4a1e90';
    await expect(spec.check('GET', '/v1/download/{scan_id}', respond(200, 'x', 'text/plain'))).rejects.toThrow(
      /not described/,
    );
    await expect(
      spec.check('GET', '/v1/download/{scan_id}', respond(200, `tree of ${id}`, 'text/plain; charset=utf-8')),
    ).resolves.toMatchObject({ status: 200 });
  });

  it('refuses a body that does not match the schema', async () => {
    await expect(
      spec.check('GET', '/health', respond(200, JSON.stringify({ status: 'ok' }), 'application/json')),
    ).rejects.toThrow(/must have required property 'version'/);
    await expect(
      spec.check(
        'GET',
        '/health',
        respond(200, JSON.stringify({ status: 'ok', version: '1', extra: 1 }), 'application/json'),
      ),
    ).rejects.toThrow(/additional properties/);
    await expect(spec.check('GET', '/health', respond(200, '{"status":', 'application/json'))).rejects.toThrow(
      /not UTF-8 JSON/,
    );
    const envelope = {
      status: 'error',
      error: 'x',
      code: 'NOT_A_CODE',
      detail: 'd',
      request_id: 'r',
      timestamp: '2026-01-01T00:00:00.000Z',
    };
    await expect(
      spec.check('GET', '/v1/scans/{scan_id}', respond(404, JSON.stringify(envelope), 'application/json')),
    ).rejects.toThrow(/code must be equal to one of the allowed values/);
    await expect(
      spec.check(
        'GET',
        '/v1/scans/{scan_id}',
        respond(
          404,
          JSON.stringify({ ...envelope, code: 'SCAN_NOT_FOUND', timestamp: 'yesterday' }),
          'application/json',
        ),
      ),
    ).rejects.toThrow(/timestamp must match format "date-time"/);
  });

  it('refuses a body where the spec declares none, and a declared header that is missing', async () => {
    await expect(spec.check('GET', '/v1/download/{scan_id}', respond(304, 'stale', 'text/plain'))).rejects.toThrow(
      /declares no body/,
    );
    const accepted = {
      status: 'success',
      message: 'm',
      data: { scan_id: '3f0c2a51-8d7e-4b1a-9c3e-2f6d5b4a1e90', state: 'queued', status_url: '/s', events_url: '/e' },
      timestamp: '2026-01-01T00:00:00.000Z',
    };
    await expect(
      spec.check('POST', '/v1/scan', respond(202, JSON.stringify(accepted), 'application/json')),
    ).rejects.toThrow(/declared header Location is missing/);
    await expect(
      spec.check('POST', '/v1/scan', respond(202, JSON.stringify(accepted), 'application/json', { location: '/s' })),
    ).resolves.toMatchObject({ status: 202 });
  });
});
