import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

export interface ServiceProcess {
  child: ChildProcess;
  /** Every JSON log line printed so far. */
  logs: Array<Record<string, unknown>>;
  /** Everything written to stderr so far (fault-injection markers land here). */
  stderr(): string;
  /** Resolves with the first log line (already printed or to come) that `matches`. */
  waitForLog(matches: (line: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** Resolves once stderr contains `text`. */
  waitForStderr(text: string, timeoutMs?: number): Promise<void>;
  /** Resolves when the process has exited, however it ended. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Sends `signal` (default SIGTERM) and resolves with the exit code (null when killed by a signal). */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

async function poll<T>(what: string, get: () => T | undefined, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = get();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * A real reposcan process run from the TypeScript sources (tsx, `source` condition), resolved
 * once it logs `readyMessage`.
 */
export async function startServiceProcess(
  entry: string,
  env: Record<string, string>,
  ready: (line: Record<string, unknown>) => boolean,
): Promise<ServiceProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', '--conditions=source', entry], {
    cwd: REPO_ROOT,
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Array<Record<string, unknown>> = [];
  let buffered = '';
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  child.stdout?.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    for (let newline = buffered.indexOf('\n'); newline >= 0; newline = buffered.indexOf('\n')) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      try {
        logs.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        // not a log line
      }
    }
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const service: ServiceProcess = {
    child,
    logs,
    stderr: () => stderr,
    waitForLog: (matches, timeoutMs = 60_000) => poll('a log line', () => logs.find(matches), timeoutMs),
    waitForStderr: (text, timeoutMs = 60_000) =>
      poll(`"${text}" on stderr`, () => (stderr.includes(text) ? true : undefined), timeoutMs).then(() => undefined),
    exited,
    stop: (signal = 'SIGTERM') =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
        child.once('exit', (code) => resolve(code));
        child.kill(signal);
      }),
  };
  const started = await Promise.race([
    service.waitForLog(ready, 30_000),
    exited.then(({ code }) => new Error(`process exited early (${code}): ${stderr}`)),
  ]);
  if (started instanceof Error) throw started;
  return service;
}

/** A real `ROLE=worker` process. */
export function startWorkerProcess(env: Record<string, string>): Promise<ServiceProcess> {
  return startServiceProcess('apps/worker/src/main.ts', env, (line) => line.msg === 'scan worker started');
}

/** A real API process (`apps/api/src/main.ts`), resolved once it listens. */
export function startApiProcess(env: Record<string, string>): Promise<ServiceProcess> {
  return startServiceProcess('apps/api/src/main.ts', env, (line) => String(line.msg).startsWith('listening on'));
}
