// Idle event streams: what holding many `GET /v1/scans/{id}/events` open costs the API process
// while nothing happens to their scans. The API runs alone (no worker), so every scan stays queued
// and every stream stays open and silent but for heartbeats.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { Agent, get } from 'node:http';
import type { ClientRequest, IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuSeconds } from './processes.js';
import { Deployment, submitScan } from './reposcan-api.js';

export interface IdleStreams {
  streams: number;
  /** Scans the streams are spread over, round robin. */
  scans: number;
  seconds: number;
  /** The API process's CPU over the window with no stream open, % of one core. */
  baseline_cpu_percent: number;
  /** The same with every stream open. */
  cpu_percent: number;
  /** cpu per 1 000 streams, % of one core: the idle process's own share included, so never flattered by noise. */
  cpu_percent_per_1000: number;
  /** Resident memory the streams added, MB. */
  rss_added_mb: number;
  /** `reposcan_event_streams_open` and `reposcan_state_watchers` while they were open (null: the API has no such metric). */
  streams_open_metric: number | null;
  watchers_metric: number | null;
}

async function rssMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) / 1024;
}

/** CPU of `pid` over `seconds`, % of one core. */
async function cpuOver(pid: number, seconds: number): Promise<number> {
  const before = await cpuSeconds(pid);
  const started = performance.now();
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  const after = await cpuSeconds(pid);
  return ((after - before) / ((performance.now() - started) / 1000)) * 100;
}

function gauge(text: string, name: string): number | null {
  const match = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  return match ? Number(match[1]) : null;
}

interface OpenStream {
  request: ClientRequest;
  response: IncomingMessage;
  ended: boolean;
}

/** Opens one stream and resolves once its first event (the scan's state now) has arrived. */
function openStream(agent: Agent, url: string): Promise<OpenStream> {
  return new Promise((resolve, reject) => {
    const request = get(url, { agent }, (response) => {
      if (response.statusCode !== 200) {
        response.resume();
        reject(new Error(`GET ${url} answered ${response.statusCode}`));
        return;
      }
      const stream: OpenStream = { request, response, ended: false };
      response.setEncoding('utf8');
      let text = '';
      const first = (chunk: string): void => {
        text += chunk;
        if (!text.includes('\n\n')) return;
        response.off('data', first);
        // Later data (heartbeats) is read and dropped, as a browser would.
        response.on('data', () => {});
        resolve(stream);
      };
      response.on('data', first);
      response.once('end', () => (stream.ended = true));
      response.once('close', () => (stream.ended = true));
    });
    request.once('error', reject);
  });
}

/**
 * Opens `streams` idle event streams over `scans` queued scans, then reads the API's CPU over
 * `seconds` (and, before any stream, the same with none open as the baseline).
 */
export async function idleStreams(streams: number, scans: number, seconds: number): Promise<IdleStreams> {
  const repoRoot = await mkdtemp(join(tmpdir(), 'reposcan-bench-streams-'));
  const repo = join(repoRoot, 'repo');
  await mkdir(repo);
  await writeFile(join(repo, 'README.md'), '# never scanned: no worker runs\n');
  const deployment = await Deployment.create({
    ALLOWED_LOCAL_ROOTS: repoRoot,
    // One client (loopback) opens every stream: the per-client cap must let it.
    MAX_EVENT_STREAMS_PER_CLIENT: String(streams),
    MAX_EVENT_STREAMS: String(streams),
    // A janitor sweep over thousands of scans landing in one window and not the other is not the streams' cost.
    JANITOR_INTERVAL_SECONDS: '3600',
  });
  const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
  const open: OpenStream[] = [];
  try {
    const { baseUrl, process: api } = await deployment.startApi();
    const ids: string[] = [];
    for (let i = 0; i < scans; i++) ids.push(await submitScan(baseUrl, repo));
    const idle = async (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 2_000));
    await idle();
    const baseline = await cpuOver(api.pid, seconds);
    const rssBefore = await rssMb(api.pid);

    // A hundred at a time: the API and this client share the machine.
    for (let i = 0; i < streams; i += 100) {
      const batch = Array.from({ length: Math.min(100, streams - i) }, (_, j) =>
        openStream(agent, `${baseUrl}/v1/scans/${ids[(i + j) % ids.length]}/events`),
      );
      open.push(...(await Promise.all(batch)));
    }
    await idle();
    const metrics = await (await fetch(`${baseUrl}/metrics`)).text();
    const cpu = await cpuOver(api.pid, seconds);
    const rssAfter = await rssMb(api.pid);
    const closed = open.filter((s) => s.ended).length;
    if (closed > 0) throw new Error(`${closed} of ${streams} idle streams were closed by the API while measured`);
    return {
      streams,
      scans,
      seconds,
      baseline_cpu_percent: baseline,
      cpu_percent: cpu,
      cpu_percent_per_1000: (cpu / streams) * 1000,
      rss_added_mb: rssAfter - rssBefore,
      streams_open_metric: gauge(metrics, 'reposcan_event_streams_open'),
      watchers_metric: gauge(metrics, 'reposcan_state_watchers'),
    };
  } finally {
    for (const s of open) s.request.destroy();
    agent.destroy();
    await deployment.close();
    await rm(repoRoot, { recursive: true, force: true });
  }
}
