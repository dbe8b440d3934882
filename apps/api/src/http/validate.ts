import type { z } from 'zod';
import { ScanError } from '@reposcan/contracts';

/** Parse with a zod schema or throw INVALID_REQUEST naming every problem. */
export function parseOrThrow<T extends z.ZodType>(schema: T, value: unknown, where: 'body' | 'query'): z.output<T> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    const path = issue.path.length > 0 ? issue.path.join('.') : where;
    if (issue.code === 'unrecognized_keys')
      return `unknown field(s) ${issue.keys.map((k) => `"${k}"`).join(', ')} in the ${where}`;
    return `${path}: ${issue.message}`;
  });
  throw new ScanError('INVALID_REQUEST', `Fix the request ${where}: ${problems.join('; ')}.`);
}
