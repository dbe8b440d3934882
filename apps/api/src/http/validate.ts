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
    const given = issue.path.length > 0 ? valueAt(value, issue.path) : null;
    if (given === undefined) return `${path} is required (${requirement(issue)})`;
    // A query parameter repeated (?format=txt&format=md) arrives as a list, which a one-value field refuses.
    const oneValue = issue.code === 'invalid_type' || issue.code === 'invalid_value';
    if (where === 'query' && oneValue && Array.isArray(given) && issue.path.length === 1)
      return `${path} is given ${given.length} times; send it once (${issue.code === 'invalid_value' ? requirement(issue) : issue.message})`;
    return `${path}: ${issue.message}`;
  });
  throw new ScanError('INVALID_REQUEST', `Fix the request ${where}: ${problems.join('; ')}.`);
}

/** What a missing field must be: its options or its type, else zod's own words. */
function requirement(issue: z.core.$ZodIssue): string {
  if (issue.code === 'invalid_value') return `one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
  if (issue.code === 'invalid_type') return `${/^[aeiou]/.test(issue.expected) ? 'an' : 'a'} ${issue.expected}`;
  return issue.message;
}

function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
  let at = value;
  for (const key of path) {
    if (typeof at !== 'object' || at === null || !Object.hasOwn(at, key)) return undefined;
    at = (at as Record<PropertyKey, unknown>)[key];
  }
  return at;
}
