import { ConfigError } from '@reposcan/config';
import { runWorkerProcess } from '@reposcan/scan-worker';

runWorkerProcess().catch((error: unknown) => {
  console.error(error instanceof ConfigError ? error.message : error);
  process.exit(1);
});
