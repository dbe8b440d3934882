// Thread entry (see inspect-service.ts): clone or open the source and preview it, off the API's
// event loop. The thread is started ahead of its jobs and serves them one at a time until one
// fails; it imports only what a preview needs, and its engine (io threads) lives as long as it.
import { compareNames, createEngine, serveThread } from '@reposcan/core';
import type { InspectResult } from '@reposcan/contracts';
import { toEngineOptions } from '@reposcan/contracts/vocabulary';
import { prepareSource } from '@reposcan/sources';
import type { InspectJob } from './inspect-job.js';

// A preview estimates its tokens: no tokenizer threads.
const engine = createEngine({ tokenThreads: 0 });

// serveThread runs it at a low priority: the API's event loop must answer everything else first.
serveThread((job: InspectJob, { signal }) => run(job, signal));

async function run(job: InspectJob, signal: AbortSignal): Promise<InspectResult> {
  const prepared = await prepareSource(job.source, {
    workDir: job.workDir,
    uploadPath: null,
    settings: job.settings,
    signal,
    onPhase: () => {},
  });
  const report = await engine.inspect({
    root: prepared.root,
    repoName: prepared.repoName,
    source: prepared.source,
    sourceSkips: prepared.sourceSkips,
    options: { ...toEngineOptions({ ...job.options, lite: false, create_zip: false }) },
    limits: job.limits,
    signal,
  });
  const files = [
    ...report.files.map((f) => ({
      path: f.path,
      subcategory: f.subcategory,
      size_bytes: f.size_bytes,
      tokens_estimate: f.tokens_estimate,
      url: f.url,
    })),
    ...report.assets.map((a) => ({
      path: a.path,
      subcategory: a.subcategory,
      size_bytes: a.size_bytes,
      tokens_estimate: 0,
      url: a.url,
    })),
  ].sort((a, b) => compareNames(a.path, b.path));
  return {
    repository: { name: report.name, branch: report.branch, commit: prepared.source.commit, tree_summary: report.tree },
    summary: report.summary,
    files,
    skipped_count: report.skipped.length,
  };
}
