import cors from 'cors';

export type CorsPolicy = ReturnType<typeof cors>;

/** CORS as configured (CORS_ORIGINS): one policy for the Express app and the liveness probe ahead of it. */
export function corsPolicy(origins: string[] | '*'): CorsPolicy {
  return cors({
    origin: origins === '*' ? '*' : origins,
    exposedHeaders: [
      'X-Request-Id',
      'Location',
      'Retry-After',
      'Content-Disposition',
      'ETag',
      'Content-Range',
      'WWW-Authenticate',
    ],
  });
}
