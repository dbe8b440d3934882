import type { SourceSettings } from './prepare-source.js';

/**
 * One sentence of which sources these settings accept, each with the variable that decides it:
 * a worker logs it at start, so an operator sees at once when it differs from the API's.
 */
export function describeSourcePolicy(
  settings: Pick<SourceSettings, 'allowedLocalRoots' | 'allowedHosts' | 'allowHttp' | 'allowPrivateHosts'>,
): string {
  const local =
    settings.allowedLocalRoots === null
      ? 'no local paths (ALLOWED_LOCAL_ROOTS unset)'
      : `local paths under ${settings.allowedLocalRoots.join(', ')} (ALLOWED_LOCAL_ROOTS)`;
  const hosts = settings.allowedHosts === '*' ? 'any host' : settings.allowedHosts.join(', ');
  const scheme = settings.allowHttp ? 'https or http (GIT_ALLOW_HTTP)' : 'https only (GIT_ALLOW_HTTP=false)';
  const addresses = settings.allowPrivateHosts
    ? 'private addresses too (GIT_ALLOW_PRIVATE_HOSTS)'
    : 'public addresses only (GIT_ALLOW_PRIVATE_HOSTS=false)';
  return `accepts ${local}; git from ${hosts} (GIT_ALLOWED_HOSTS), ${scheme}, ${addresses}; uploaded ZIPs`;
}
