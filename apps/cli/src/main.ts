// `reposcan` entry point (bin/reposcan.js runs this, built or through tsx).
// The env-file entry alone: the package's index loads zod and the whole schema (~0.07 s).
import { ConfigError, environmentWithEnvFile } from '@reposcan/config/env-file';
import { EXIT } from './exit-codes.js';
import { runCli } from './run-cli.js';

// REPOSCAN_SERVER may come from .env in this folder, as the service's variables do; the environment wins.
let env: NodeJS.ProcessEnv | null = null;
try {
  env = environmentWithEnvFile(process.env, process.cwd());
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  process.stderr.write(`reposcan: ${error.message}\n`);
  process.exitCode = EXIT.USAGE;
}
if (env) {
  process.exitCode = await runCli(process.argv.slice(2), {
    stdout: process.stdout,
    stderr: process.stderr,
    cwd: process.cwd(),
    env,
    streams: { stdin: process.stdin, stdout: process.stdout },
  });
}
