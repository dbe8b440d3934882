import { cp, mkdir, mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '@reposcan/config';
import { createLogger } from '@reposcan/runtime';
import type { Logger } from '@reposcan/runtime';
import { createRuntime } from '../../src/create-runtime.js';
import type { Runtime } from '../../src/create-runtime.js';

export const SAMPLE_REPO = fileURLToPath(
  new URL('../../../../packages/core/test/fixtures/sample-repo', import.meta.url),
);

export interface TestApi {
  runtime: Runtime;
  baseUrl: string;
  dataDir: string;
  /** A folder inside ALLOWED_LOCAL_ROOTS holding a copy of the sample repository. */
  repoDir: string;
  localRoot: string;
  close(): Promise<void>;
}

/**
 * A real API on a free loopback port over a fresh DATA_DIR. `env` overrides configuration
 * exactly as environment variables would; `options.log` replaces the (silent) logger.
 */
export async function startTestApi(
  env: Record<string, string> = {},
  options: { statePollMs?: number; log?: Logger } = {},
): Promise<TestApi> {
  const base = await mkdtemp(join(tmpdir(), 'reposcan-api-'));
  const dataDir = join(base, 'data');
  const localRoot = join(base, 'repos');
  const repoDir = join(localRoot, 'sample');
  await mkdir(localRoot, { recursive: true });
  await cp(SAMPLE_REPO, repoDir, { recursive: true });
  const config = loadConfig({
    HOST: '127.0.0.1',
    PORT: '0',
    DATA_DIR: dataDir,
    ALLOWED_LOCAL_ROOTS: localRoot,
    SCAN_WAIT_SECONDS: '20',
    LOG_LEVEL: 'silent',
    RATE_LIMIT_PER_MINUTE: '0',
    INSPECT_RATE_LIMIT_PER_MINUTE: '0',
    WORKER_CONCURRENCY: '2',
    ...env,
  });
  const runtime = await createRuntime(config, { log: createLogger(config.logLevel, 'test-api'), ...options });
  const server = await runtime.listen();
  const { port } = server.address() as AddressInfo;
  return {
    runtime,
    baseUrl: `http://127.0.0.1:${port}`,
    // The folder the API really uses: an env override of DATA_DIR wins over the default one.
    dataDir: runtime.config.dataDir,
    repoDir,
    localRoot,
    async close() {
      await runtime.close();
      await rm(base, { recursive: true, force: true });
    },
  };
}
