import { describe, expect, it } from 'vitest';
import { ScanError } from '@reposcan/contracts';
import type { ErrorCode } from '@reposcan/contracts';
import { asWorkerRefusal } from '../src/worker-policy-refusal.js';

const roots: { allowedLocalRoots: string[] | null } = { allowedLocalRoots: ['/srv/repos'] };

function refusal(code: ErrorCode, message: string, settings = roots): ScanError {
  const result = asWorkerRefusal(new ScanError(code, message), settings);
  if (!(result instanceof ScanError)) throw new Error('expected a ScanError');
  return result;
}

describe('a source the worker refuses on policy', () => {
  it.each([
    ['OUTSIDE_ALLOWED_ROOTS', 'ALLOWED_LOCAL_ROOTS'],
    ['HOST_NOT_ALLOWED', 'GIT_ALLOWED_HOSTS'],
    ['SCHEME_NOT_ALLOWED', 'GIT_ALLOW_HTTP'],
    ['PRIVATE_ADDRESS', 'GIT_ALLOW_PRIVATE_HOSTS'],
  ] as const)("%s keeps its code and names the worker's %s", (code, variable) => {
    const error = refusal(code, 'The original sentence.');
    expect(error.code).toBe(code);
    expect(error.message).toBe(
      `The API accepted this scan, but the worker that ran it refused it. Refused by the worker's configuration (${variable} of the worker): The original sentence. Give every worker the same ${variable} as the API (in Redis mode each role reads its own environment; see README, Redis mode).`,
    );
    expect(error.retryable).toBe(false);
  });

  it('LOCAL_PATHS_DISABLED with no roots on the worker says ALLOWED_LOCAL_ROOTS is unset there', () => {
    const error = refusal('LOCAL_PATHS_DISABLED', 'Scanning server-local paths is disabled on this server.', {
      allowedLocalRoots: null,
    });
    expect(error.message).toContain("ALLOWED_LOCAL_ROOTS is unset in the worker's configuration");
  });

  it('LOCAL_PATHS_DISABLED on a worker that has roots (no /proc) is its platform, left as it is', () => {
    const original = new ScanError(
      'LOCAL_PATHS_DISABLED',
      'Scanning server-local paths needs a Linux server with /proc.',
    );
    expect(asWorkerRefusal(original, roots)).toBe(original);
  });

  it('other failures pass through unchanged', () => {
    const notFound = new ScanError('LOCAL_PATH_NOT_FOUND', 'No folder exists at this path.');
    const bug = new TypeError('x is undefined');
    expect(asWorkerRefusal(notFound, roots)).toBe(notFound);
    expect(asWorkerRefusal(bug, roots)).toBe(bug);
  });
});
