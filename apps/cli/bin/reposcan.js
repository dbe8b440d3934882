#!/usr/bin/env node
// Launcher for `reposcan`. Runs the built CLI (apps/cli/dist) when it exists; otherwise the
// TypeScript sources through tsx with the `source` export condition, so `npx reposcan` works
// straight after `npm ci` with no build. REPOSCAN_CLI_FROM_SOURCE=1 forces the sources (tests
// use it so a stale dist can never stand in for the code under test).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import process from 'node:process';
import { URL, fileURLToPath } from 'node:url';

const built = new URL('../dist/main.js', import.meta.url);

if (existsSync(built) && process.env.REPOSCAN_CLI_FROM_SOURCE !== '1') {
  await import(built.href);
} else {
  // Resolved from this file, not the working directory, so it works from any folder.
  const tsx = import.meta.resolve('tsx');
  const main = fileURLToPath(new URL('../src/main.ts', import.meta.url));
  const child = spawn(process.execPath, ['--conditions=source', '--import', tsx, main, ...process.argv.slice(2)], {
    stdio: 'inherit',
  });
  // Ctrl-C reaches the whole foreground group; a kill aimed at this process alone is passed on.
  const forward = (signal) => child.kill(signal);
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  for (const signal of signals) process.on(signal, forward);
  child.on('error', (error) => {
    process.stderr.write(`reposcan: cannot start the CLI: ${error.message}\n`);
    process.exit(1);
  });
  child.on('exit', (code, signal) => {
    for (const s of signals) process.off(s, forward);
    if (signal) process.kill(process.pid, signal);
    else process.exit(code ?? 1);
  });
}
