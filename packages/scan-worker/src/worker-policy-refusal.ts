import { isScanError, ScanError } from '@reposcan/contracts';
import { POLICY_VARIABLE } from '@reposcan/sources';
import type { SourceSettings } from '@reposcan/sources';

/**
 * A source the API accepted and the worker refuses on policy: the API and the worker read their
 * own environments, and in Redis mode they can differ. The code stays the refusal's own (a client
 * handles it as it would at submit time); the sentence says it was the worker's configuration, and
 * which variable, instead of contradicting the API that just accepted the scan.
 */
export function asWorkerRefusal(error: unknown, settings: Pick<SourceSettings, 'allowedLocalRoots'>): unknown {
  if (!isScanError(error)) return error;
  const variable = POLICY_VARIABLE[error.code];
  if (variable === undefined) return error;
  // Local paths refused for want of /proc are the worker's platform, not a setting.
  if (error.code === 'LOCAL_PATHS_DISABLED' && settings.allowedLocalRoots !== null) return error;
  const why =
    error.code === 'LOCAL_PATHS_DISABLED'
      ? "ALLOWED_LOCAL_ROOTS is unset in the worker's configuration, so the worker refuses every local path."
      : `Refused by the worker's configuration (${variable} of the worker): ${error.message}`;
  return new ScanError(
    error.code,
    `The API accepted this scan, but the worker that ran it refused it. ${why} Give every worker the same ${variable} as the API (in Redis mode each role reads its own environment; see README, Redis mode).`,
    { cause: error },
  );
}
