// HTTP load with wrk (Debian package `wrk`), parsed from `wrk --latency`.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface WrkResult {
  url: string;
  seconds: number;
  connections: number;
  threads: number;
  requests: number;
  requests_per_sec: number;
  latency_ms: { p50: number; p75: number; p90: number; p99: number };
  non_2xx: number;
  socket_errors: number;
}

/** wrk runs with 2 threads and 16 connections by default: at 2 000 req/s that is 8 ms of queueing on average (Little's law). */
export async function runWrk(url: string, seconds: number, connections = 16, threads = 2): Promise<WrkResult> {
  const { stdout } = await run(
    'wrk',
    [`-t${threads}`, `-c${connections}`, `-d${seconds}s`, '--timeout', '5s', '--latency', url],
    {
      timeout: (seconds + 30) * 1000,
    },
  );
  return parseWrk(stdout, { url, seconds, connections, threads });
}

function toMs(value: string, unit: string): number {
  const n = Number.parseFloat(value);
  if (unit === 'us') return n / 1000;
  if (unit === 's') return n * 1000;
  if (unit === 'm') return n * 60_000;
  return n;
}

export function parseWrk(
  output: string,
  base: Pick<WrkResult, 'url' | 'seconds' | 'connections' | 'threads'>,
): WrkResult {
  const percentile = (p: number): number => {
    const match = new RegExp(`^\\s+${p}%\\s+([\\d.]+)(us|ms|s|m)\\s*$`, 'm').exec(output);
    if (!match) throw new Error(`wrk output has no ${p}% latency:\n${output}`);
    return toMs(match[1] as string, match[2] as string);
  };
  const requests = /^\s*(\d+) requests in/m.exec(output);
  const rate = /^Requests\/sec:\s+([\d.]+)/m.exec(output);
  if (!requests || !rate) throw new Error(`cannot read wrk output:\n${output}`);
  const non2xx = /Non-2xx or 3xx responses:\s+(\d+)/.exec(output);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output);
  return {
    ...base,
    requests: Number(requests[1]),
    requests_per_sec: Number(rate[1]),
    latency_ms: { p50: percentile(50), p75: percentile(75), p90: percentile(90), p99: percentile(99) },
    non_2xx: non2xx ? Number(non2xx[1]) : 0,
    socket_errors: socket ? socket.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0,
  };
}
