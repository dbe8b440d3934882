import { z } from 'zod';
import { ERROR_CODES } from './error-codes.js';

/** Every JSON response but /health, /ready, /metrics, the OpenAPI documents and artifacts. */
export function successEnvelope<T extends z.ZodType>(data: T) {
  return z.object({
    status: z.literal('success'),
    message: z.string(),
    data,
    timestamp: z.iso.datetime(),
  });
}

export const ErrorEnvelope = z
  .object({
    status: z.literal('error'),
    error: z.string().meta({ description: 'Short title.', example: 'Branch not found' }),
    code: z.enum(ERROR_CODES),
    detail: z.string().meta({ description: 'What happened and what to do about it.' }),
    request_id: z.string(),
    timestamp: z.iso.datetime(),
    data: z
      .object({ scan_id: z.string() })
      .optional()
      .meta({ description: 'Present when a scan exists for this failure.' }),
  })
  .meta({ id: 'ErrorEnvelope' });
export type ErrorEnvelope = z.output<typeof ErrorEnvelope>;

export const HealthResponse = z.object({ status: z.literal('ok'), version: z.string() }).meta({ id: 'Health' });
export const ReadyResponse = z
  .object({
    status: z.enum(['ready', 'not_ready']),
    checks: z.object({
      redis: z.enum(['ok', 'down', 'not_used']),
      volume: z.enum(['ok', 'not_writable', 'low_space']),
    }),
  })
  .meta({ id: 'Ready' });
