// Child processes the benchmark measures: wall time from spawn to exit and peak RSS, plus the
// long-lived API and worker processes whose peak RSS is read from /proc.
import { execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const GNU_TIME = '/usr/bin/time';

export interface Measured {
  wallMs: number;
  /** Peak resident set of the process (threads included), MB; null when it could not be read. */
  peakRssMb: number | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  cwd?: string;
  env?: Record<string, string | undefined>;
  /** Kill the process (and fail) after this long. */
  timeoutMs?: number;
}

/**
 * Runs a command to completion and measures it. Peak RSS comes from GNU time (`%M`, the maximum
 * resident set of the child, worker threads included); without it, from sampling VmHWM.
 */
export async function runMeasured(command: string, args: string[], options: RunOptions = {}): Promise<Measured> {
  const useTime = existsSync(GNU_TIME);
  const scratch = await mkdtemp(join(tmpdir(), 'reposcan-bench-time-'));
  const timeFile = join(scratch, 'rss');
  try {
    const [cmd, argv] = useTime ? [GNU_TIME, ['-f', '%M', '-o', timeFile, command, ...args]] : [command, args];
    const started = performance.now();
    const child = spawn(cmd, argv, {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let sampled = 0;
    const sampler = useTime
      ? undefined
      : setInterval(() => void readVmHwmKb(child.pid).then((kb) => (sampled = Math.max(sampled, kb ?? 0))), 50);
    const { code, stdout, stderr } = await collect(child, options.timeoutMs);
    const wallMs = performance.now() - started;
    if (sampler) clearInterval(sampler);
    if (code !== 0) {
      throw new Error(`${command} ${args.join(' ')} exited with ${code}:\n${tail(stderr || stdout)}`);
    }
    let peakKb: number | null = sampled || null;
    if (useTime) {
      const kb = Number.parseInt((await readFile(timeFile, 'utf8')).trim().split('\n').pop() ?? '', 10);
      peakKb = Number.isFinite(kb) ? kb : null;
    }
    return { wallMs, peakRssMb: peakKb === null ? null : peakKb / 1024, stdout, stderr };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

function collect(
  child: ChildProcess,
  timeoutMs: number | undefined,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    const timer = timeoutMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', reject);
    child.once('close', (code, signal) => {
      if (timer) clearTimeout(timer);
      resolve({
        code: signal ? -1 : code,
        stdout,
        stderr: signal ? `killed by ${signal} (timeout?)\n${stderr}` : stderr,
      });
    });
  });
}

export function tail(text: string, lines = 20): string {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}

/** The process's peak resident set so far (VmHWM), kB. */
export async function readVmHwmKb(pid: number | undefined): Promise<number | null> {
  if (pid === undefined) return null;
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const match = /^VmHWM:\s+(\d+) kB/m.exec(status);
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  }
}

/** Resets VmHWM to the current RSS (Linux ≥ 4.0), so the next reading is the peak of what follows. */
export async function resetVmHwm(pid: number | undefined): Promise<boolean> {
  if (pid === undefined) return false;
  try {
    await writeFile(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

export interface ServiceProcess {
  child: ChildProcess;
  pid: number;
  /** The JSON log line that said the process is ready (pino). */
  readyLine: Record<string, unknown>;
  /** The last 20 kB of its output, for error messages. */
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts a long-lived process and resolves once a JSON log line satisfies `ready`. Later output is
 * only kept as a short tail: an API under load logs every request, and parsing that would take CPU
 * from the process being measured.
 */
export async function startService(
  command: string,
  args: string[],
  env: Record<string, string>,
  ready: (line: Record<string, unknown>) => boolean,
  timeoutMs = 60_000,
): Promise<ServiceProcess> {
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let raw = '';
  let buffered: string | null = '';
  const keep = (chunk: Buffer): void => {
    raw = (raw + chunk.toString()).slice(-20_000);
  };
  child.stderr?.on('data', keep);
  child.stdout?.on('data', keep);
  const readyLine = await new Promise<Record<string, unknown>>((resolve, reject) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    const onData = (chunk: Buffer): void => {
      if (buffered === null) return;
      buffered += chunk.toString();
      let newline;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        let entry: Record<string, unknown>;
        try {
          entry = JSON.parse(line) as Record<string, unknown>;
        } catch {
          continue;
        }
        if (ready(entry)) {
          buffered = null;
          clearTimeout(timer);
          child.stdout?.off('data', onData);
          resolve(entry);
          return;
        }
      }
    };
    child.stdout?.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${args.join(' ')} exited early (${code}):\n${tail(raw)}`));
    });
  });
  return {
    child,
    pid: child.pid as number,
    readyLine,
    output: () => raw,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        const kill = setTimeout(() => child.kill('SIGKILL'), 15_000);
        child.once('exit', () => {
          clearTimeout(kill);
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}

const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** User + system CPU of a process so far, in seconds (fields 14 and 15 of /proc/<pid>/stat). */
export async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may hold spaces; count fields after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}
