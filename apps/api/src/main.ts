import { ConfigError, describeRedisTarget, loadConfig } from '@reposcan/config';
import { createLogger } from '@reposcan/runtime';
import { runWorkerProcess } from '@reposcan/scan-worker';
import { createRuntime } from './create-runtime.js';

// One entry for every role: ROLE=worker runs only the job consumer, api/all serve HTTP
// (all also consumes jobs in this process; without Redis the queue is in memory).
async function main(): Promise<void> {
  const config = loadConfig();
  if (config.role === 'worker') return runWorkerProcess(config);
  const log = createLogger(config.logLevel, 'reposcan-api');
  // The first line says which mode this is: embedded mode keeps no queue across restarts.
  log.info(
    { role: config.role, dataDir: config.dataDir },
    config.redis === null
      ? `reposcan ${config.version} starting in embedded mode: in-memory queue and in-process worker, no Redis (set REDIS_URL for a persistent queue)`
      : `reposcan ${config.version} starting with role ${config.role} on Redis (${describeRedisTarget(config.redis)})`,
  );
  const runtime = await createRuntime(config, { log });
  const server = await runtime.listen();
  const address = server.address();
  const where = typeof address === 'object' && address ? `http://${address.address}:${address.port}` : String(address);
  log.info({ docs: `${where}/docs` }, `listening on ${where}`);
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    runtime.log.info({ signal }, 'stopping');
    runtime.close().then(
      () => process.exit(0),
      (error: unknown) => {
        runtime.log.error({ err: error }, 'unclean shutdown');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((error: unknown) => {
  console.error(error instanceof ConfigError ? error.message : error);
  process.exit(1);
});
