// Thread entry (see inspect-service.ts): clone or open the source and preview it, off the API's
// event loop. The thread is started ahead of its jobs and serves them one at a time until one
// fails; it imports only what a preview needs, and its engine (io threads) lives as long as it.
import { createEngine, serveThread, toInspectResult } from '@reposcan/core';
import type { InspectResult } from '@reposcan/contracts';
import { toEngineOptions } from '@reposcan/contracts/vocabulary';
import { filesOffDisk, prepareSource } from '@reposcan/sources';
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
    gitToken: job.gitToken,
    filesInStore: true,
  });
  const { inStore } = prepared;
  const absent = filesOffDisk(prepared);
  const report = await engine
    .inspect(
      {
        root: prepared.root,
        repoName: prepared.repoName,
        source: prepared.source,
        sourceSkips: prepared.sourceSkips,
        ...(prepared.git ? { git: prepared.git } : {}),
        ...(absent ? { absent } : {}),
        options: toEngineOptions({ ...job.options, lite: false, create_zip: false }),
        limits: job.limits,
        signal,
      },
      inStore ? { readAbsent: inStore } : {},
    )
    .finally(() => inStore?.close().catch(() => {}));
  return toInspectResult(report, prepared.source.commit, job.options.max_tokens_per_part);
}
