import type { SourceSettings } from '../../../src/prepare-source.js';

/**
 * Source settings for real git against a loopback test server: any host, plain http and private
 * addresses allowed (for these tests only), limits no fixture comes near.
 */
export function loopbackSourceSettings(gitCredentialsFile: string | null = null): SourceSettings {
  return {
    allowedLocalRoots: null,
    allowedHosts: '*',
    allowHttp: true,
    allowPrivateHosts: true,
    cloneTimeoutMs: 60_000,
    cloneStallSeconds: 30,
    maxCloneBytes: 1024 ** 3,
    maxBlobBytes: 1024 ** 2,
    archive: {
      maxEntries: 1000,
      maxUncompressedBytes: 1024 ** 2,
      maxRatio: 100,
      maxDepth: 20,
      maxNameBytes: 1024,
      maxComponentBytes: 255,
    },
    gitCredentialsFile,
  };
}
