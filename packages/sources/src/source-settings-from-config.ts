import type { Config } from '@reposcan/config';
import type { SourceSettings } from './prepare-source.js';
import type { RemotePolicy } from './remote/remote-policy.js';

export function sourceSettingsFromConfig(c: Config): SourceSettings {
  return {
    allowedLocalRoots: c.allowedLocalRoots.length > 0 ? [...c.allowedLocalRoots] : null,
    allowedHosts: c.gitAllowedHosts === '*' ? '*' : [...c.gitAllowedHosts],
    allowHttp: c.gitAllowHttp,
    allowPrivateHosts: c.gitAllowPrivateHosts,
    cloneTimeoutMs: c.cloneTimeoutSeconds * 1000,
    cloneStallSeconds: c.cloneStallSeconds,
    maxCloneBytes: c.maxCloneBytes,
    maxBlobBytes: c.maxFileBytes,
    gitCredentialsFile: c.gitCredentialsFile,
    archive: {
      maxEntries: c.maxArchiveEntries,
      maxUncompressedBytes: c.maxUncompressedBytes,
      maxRatio: c.maxCompressionRatio,
      maxDepth: c.maxPathDepth,
      maxNameBytes: 1024,
      maxComponentBytes: 255,
    },
  };
}

/** The host rules of callback URLs (WEBHOOK_*): the same checks as git hosts, their own settings. */
export function webhookPolicyFromConfig(c: Config): RemotePolicy {
  return {
    allowedHosts: c.webhookAllowedHosts === '*' ? '*' : [...c.webhookAllowedHosts],
    allowHttp: c.webhookAllowHttp,
    allowPrivateHosts: c.webhookAllowPrivateHosts,
  };
}
