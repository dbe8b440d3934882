// The API under load (wrk against one API process): summaries of a finished scan, and /health
// while two worker processes run heavy scans.
import { join } from 'node:path';
import type { Corpus } from './corpora.js';
import { call, Deployment, scanAndWait, scanStatus, submitScan } from './reposcan-api.js';
import { runWrk } from './wrk.js';
import type { WrkResult } from './wrk.js';

export interface SummaryLoad {
  repo: string;
  files: number;
  summary_bytes: number;
  wrk: WrkResult;
}

/** GET /v1/summary/{id} of one completed scan of `repo` (a folder of the real corpus). */
export async function summaryLoad(corpus: Corpus, folder: string, seconds: number): Promise<SummaryLoad> {
  const deployment = await Deployment.create();
  try {
    const { baseUrl } = await deployment.startApi();
    const worker = await deployment.startWorker();
    const result = await scanAndWait(baseUrl, join(corpus.root, folder));
    const id = result.scan_id;
    // The worker is idle from here on; stop it so the API has the machine to itself.
    await deployment.stop(worker);
    const response = await fetch(`${baseUrl}/v1/summary/${id}`);
    if (response.status !== 200) throw new Error(`GET /v1/summary answered ${response.status}`);
    const bytes = (await response.arrayBuffer()).byteLength;
    const wrk = await runWrk(`${baseUrl}/v1/summary/${id}`, seconds);
    return { repo: folder, files: result.summary.total_files, summary_bytes: bytes, wrk };
  } finally {
    await deployment.close();
  }
}

export interface HealthLoad {
  wrk: WrkResult;
  workers: number;
  /** Scans of the heavy corpus finished while wrk ran. */
  scans_completed: number;
  /** Share of status polls that saw two scans running at once. */
  both_busy_share: number;
}

/** GET /health on the API while two worker processes each run scans of `corpus` back to back. */
export async function healthUnderScans(corpus: Corpus, seconds: number): Promise<HealthLoad> {
  const deployment = await Deployment.create();
  try {
    const { baseUrl } = await deployment.startApi();
    await Promise.all([deployment.startWorker(), deployment.startWorker()]);
    const ids: string[] = [];
    const submit = async () => ids.push(await submitScan(baseUrl, corpus.root));
    // Four in flight: both workers busy, one more queued for each.
    for (let i = 0; i < 4; i++) await submit();
    // Wait until both workers have started, so wrk measures the loaded API from its first second.
    for (let tries = 0; tries < 600; tries++) {
      const states = await Promise.all(ids.map((id) => scanStatus(baseUrl, id)));
      if (states.filter((s) => s.state === 'running').length >= 2) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }

    let stop = false;
    let completed = 0;
    let polls = 0;
    let bothBusy = 0;
    const done = new Set<string>();
    const feeder = (async () => {
      while (!stop) {
        const states = await Promise.all(
          ids.filter((id) => !done.has(id)).map(async (id) => ({ id, status: await scanStatus(baseUrl, id) })),
        );
        polls++;
        if (states.filter((s) => s.status.state === 'running').length >= 2) bothBusy++;
        for (const { id, status } of states) {
          if (status.state === 'completed') completed++;
          if (status.state === 'failed' || status.state === 'cancelled')
            throw new Error(`load scan ${id} ${status.state}: ${JSON.stringify(status.error)}`);
          if (status.state !== 'queued' && status.state !== 'running') done.add(id);
        }
        while (ids.length - done.size < 4) await submit();
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    })();
    let wrk: WrkResult;
    try {
      wrk = await runWrk(`${baseUrl}/health`, seconds);
    } finally {
      stop = true;
      await feeder;
    }
    // Cancel what is still queued or running, so the workers stop quickly.
    await Promise.all(ids.filter((id) => !done.has(id)).map((id) => call(baseUrl, 'DELETE', `/v1/cleanup/${id}`)));
    return { wrk, workers: 2, scans_completed: completed, both_busy_share: polls === 0 ? 0 : bothBusy / polls };
  } finally {
    await deployment.close();
  }
}
