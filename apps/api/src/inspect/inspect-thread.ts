// Worker-thread entry: clone or open the source and preview it, off the API's event loop. The
// thread is started ahead of its jobs and serves them one at a time until one fails (see
// inspect-service.ts); it imports only what a preview needs.
import { parentPort } from 'node:worker_threads';
import { compareNames, inspectTree, lowerThreadPriority } from '@reposcan/core';
import { toEngineOptions } from '@reposcan/contracts/vocabulary';
import { prepareSource } from '@reposcan/sources';
import type { InspectJob, InspectOutcome, InspectThreadMessage } from './inspect-job.js';

// A preview is heavy; the API's event loop must answer everything else first.
lowerThreadPriority();
let controller = new AbortController();
parentPort?.on('message', (message: InspectThreadMessage) => {
  if (message === 'abort') {
    controller.abort(new Error('inspect aborted'));
    return;
  }
  controller = new AbortController();
  void run(message.job, controller.signal).then(
    (outcome) => parentPort?.postMessage(outcome),
    (error: unknown) => {
      const e = error as { name?: string; code?: string; message?: string };
      const outcome: InspectOutcome = { ok: false, error: { name: e.name ?? 'Error', ...(e.code ? { code: e.code } : {}), message: e.message ?? String(error) } };
      parentPort?.postMessage(outcome);
    },
  );
});

async function run(job: InspectJob, signal: AbortSignal): Promise<InspectOutcome> {
  const prepared = await prepareSource(job.source, { workDir: job.workDir, uploadPath: null, settings: job.settings, signal, onPhase: () => {} });
  const report = await inspectTree({
    root: prepared.root,
    repoName: prepared.repoName,
    source: prepared.source,
    sourceSkips: prepared.sourceSkips,
    options: { ...toEngineOptions({ ...job.options, lite: false, create_zip: false }) },
    limits: job.limits,
    signal,
  });
  const files = [
    ...report.files.map((f) => ({ path: f.path, subcategory: f.subcategory, size_bytes: f.size_bytes, tokens_estimate: f.tokens_estimate, url: f.url })),
    ...report.assets.map((a) => ({ path: a.path, subcategory: a.subcategory, size_bytes: a.size_bytes, tokens_estimate: 0, url: a.url })),
  ].sort((a, b) => compareNames(a.path, b.path));
  return {
    ok: true,
    data: {
      repository: { name: report.name, branch: report.branch, commit: prepared.source.commit, tree_summary: report.tree },
      summary: report.summary,
      files,
      skipped_count: report.skipped.length,
    },
  };
}

