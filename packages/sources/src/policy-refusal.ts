import net from 'node:net';
import { isScanError, ScanError } from '@reposcan/contracts';
import type { ErrorCode, ScanRequestRecord } from '@reposcan/contracts';
import type { SourceSettings } from './prepare-source.js';
import { parseRepoPath } from './remote/parse-repo-path.js';
import { checkRemotePolicy } from './remote/remote-policy.js';

/** The settings that decide which sources a process accepts (what a worker announces). */
export type SourcePolicy = Pick<
  SourceSettings,
  'allowedLocalRoots' | 'allowedHosts' | 'allowHttp' | 'allowPrivateHosts'
>;

/** The source-policy refusals, and the variable each one comes from. */
export const POLICY_VARIABLE: Partial<Record<ErrorCode, string>> = {
  LOCAL_PATHS_DISABLED: 'ALLOWED_LOCAL_ROOTS',
  OUTSIDE_ALLOWED_ROOTS: 'ALLOWED_LOCAL_ROOTS',
  HOST_NOT_ALLOWED: 'GIT_ALLOWED_HOSTS',
  SCHEME_NOT_ALLOWED: 'GIT_ALLOW_HTTP',
  PRIVATE_ADDRESS: 'GIT_ALLOW_PRIVATE_HOSTS',
};

/**
 * The refusal another process with `policy` would certainly give `source`, or null when it may
 * accept it. Only what can be judged from here: a local path is refused only when `policy` has no
 * roots at all (that process may mount its folders elsewhere, so containment is its own to
 * decide); a remote URL is judged on its scheme, its host and `addresses`, the addresses this
 * process resolved its host to (no second lookup).
 */
export async function policyRefusal(
  source: ScanRequestRecord['source'],
  policy: SourcePolicy,
  addresses: readonly string[],
): Promise<ScanError | null> {
  if (source.type === 'upload') return null;
  if (source.type === 'local') {
    return policy.allowedLocalRoots === null || policy.allowedLocalRoots.length === 0
      ? new ScanError('LOCAL_PATHS_DISABLED', 'Scanning server-local paths is disabled (ALLOWED_LOCAL_ROOTS is unset).')
      : null;
  }
  const parsed = parseRepoPath(source.repo_path);
  if (parsed.kind !== 'remote') return null;
  const lookup = () => Promise.resolve(addresses.map((address) => ({ address, family: net.isIP(address) })));
  try {
    await checkRemotePolicy(parsed.url, policy, { lookup });
    return null;
  } catch (error) {
    return isScanError(error) && POLICY_VARIABLE[error.code] !== undefined ? error : null;
  }
}
