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
/**
 * Why a process is not ready, as a machine code: the Redis ones come from a write probe in the
 * queue's own keyspace (what an enqueue needs), the volume ones from the disk check.
 */
export const NOT_READY_CODES = [
  'REDIS_UNREACHABLE',
  'REDIS_READ_ONLY',
  'REDIS_OUT_OF_MEMORY',
  'REDIS_CROSSSLOT',
  'REDIS_WRONG_SERVER',
  'REDIS_AUTH_FAILED',
  'REDIS_WRITE_FAILED',
  'VOLUME_NOT_WRITABLE',
  'VOLUME_LOW_SPACE',
  'WORKER_STOPPING',
] as const;
export type NotReadyCode = (typeof NOT_READY_CODES)[number];

export const NotReadyReason = z.object({
  code: z.enum(NOT_READY_CODES),
  message: z.string().meta({ description: 'What is wrong and what to do about it.' }),
});
export type NotReadyReason = z.output<typeof NotReadyReason>;

export const ReadyResponse = z
  .object({
    status: z.enum(['ready', 'not_ready']),
    checks: z.object({
      redis: z.enum(['ok', 'down', 'refuses_writes', 'not_used']),
      volume: z.enum(['ok', 'not_writable', 'low_space']),
      worker: z
        .enum(['ok', 'stopping'])
        .optional()
        .meta({ description: "A worker's own (METRICS_PORT): `stopping` once SIGTERM arrived." }),
    }),
    reasons: z.array(NotReadyReason).meta({ description: 'Empty when ready; one entry per failed check otherwise.' }),
  })
  .meta({ id: 'Ready' });
export type ReadyResponse = z.output<typeof ReadyResponse>;

/** What `/ready` is made of, on the API and on a worker. */
export interface ReadinessChecks {
  /** The queue's write probe: null when it took the write, undefined without Redis. */
  redisProblem: NotReadyReason | null | undefined;
  /** The volume (DATA_DIR): null when it could not be read at all. */
  disk: { writable: boolean; freeRatio: number } | null;
  minFreeDiskRatio: number;
  /** A worker's: whether SIGTERM arrived; absent on the API. */
  stopping?: boolean;
}

/** The `/ready` answer: every check, and one reason (a code and what to do) per failed one. */
export function readyResponse({ redisProblem, disk, minFreeDiskRatio, stopping }: ReadinessChecks): ReadyResponse {
  const redis =
    redisProblem === undefined
      ? 'not_used'
      : redisProblem === null
        ? 'ok'
        : redisProblem.code === 'REDIS_UNREACHABLE'
          ? 'down'
          : 'refuses_writes';
  const volume = !disk || !disk.writable ? 'not_writable' : disk.freeRatio < minFreeDiskRatio ? 'low_space' : 'ok';
  const reasons: NotReadyReason[] = [];
  if (redisProblem) reasons.push(redisProblem);
  if (volume === 'not_writable')
    reasons.push({ code: 'VOLUME_NOT_WRITABLE', message: 'The data volume (DATA_DIR) cannot be written.' });
  if (volume === 'low_space')
    reasons.push({
      code: 'VOLUME_LOW_SPACE',
      message: `The data volume (DATA_DIR) has less free space than MIN_FREE_DISK_RATIO (${minFreeDiskRatio}).`,
    });
  if (stopping)
    reasons.push({
      code: 'WORKER_STOPPING',
      message:
        'This worker is shutting down (SIGTERM): it takes no new scan and hands back the one it runs; other workers take the work.',
    });
  return {
    status: reasons.length === 0 ? 'ready' : 'not_ready',
    checks: { redis, volume, ...(stopping === undefined ? {} : { worker: stopping ? 'stopping' : 'ok' }) },
    reasons,
  };
}
