import { mkdtemp, rename, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { toEngineOptions } from '@reposcan/contracts/vocabulary';
import { artifactFileName, selectFormats } from '../artifact-files.js';
import type { ScanArgs } from '../cli-args.js';
import type { CliIo } from '../cli-io.js';
import { ScanEndedError } from '../exit-codes.js';
import { resolveLocalFolder } from '../local-folder.js';
import { createProgressReporter, progressMode } from '../progress-reporter.js';
import type { ScanOutcome, WrittenFile } from '../scan-outcome.js';
import { makeOutputFolder } from './scan-on-server.js';

/**
 * `reposcan scan --local <folder>`: the engine runs in this process (no server, no queue) and
 * writes into a hidden folder inside the output folder; the chosen artifacts are then renamed
 * into place, so the output folder never holds a partial file.
 */
export async function scanLocal(args: ScanArgs, io: CliIo): Promise<ScanOutcome> {
  const folder = await resolveLocalFolder(args.target, io.cwd);
  const output = resolve(io.cwd, args.output);
  await makeOutputFolder(output);
  const { createEngine, DEFAULT_ENGINE_LIMITS } = await import('@reposcan/core');
  const progress = createProgressReporter(io.stderr, progressMode(io.stderr, args.quiet, io.env));

  const staging = await mkdtemp(join(output, '.reposcan-'));
  // Its threads end with the scan, so the process can exit.
  const engine = createEngine();
  try {
    let report;
    try {
      report = await engine.runScan(
        {
          root: folder.root,
          repoName: folder.name,
          source: folder.source,
          options: toEngineOptions(args.options),
          limits: DEFAULT_ENGINE_LIMITS,
          encoding: args.encoding,
          outDir: staging,
        },
        {},
        (p) => progress.update({ state: 'running', phase: p.phase, filesDone: p.files_done, filesTotal: p.files_total }),
      );
    } catch (error) {
      progress.finish();
      throw new ScanEndedError(null, 'failed', 'SCAN_FAILED', (error as Error).message);
    }
    const total = report.summary.total_files;
    progress.update({ state: 'completed', phase: 'done', filesDone: total, filesTotal: total });
    progress.finish();

    const formats = selectFormats(report.artifacts.map((a) => a.format), args.formats);
    const files: WrittenFile[] = [];
    for (const format of formats) {
      const artifact = report.artifacts.find((a) => a.format === format)!;
      const path = join(output, artifactFileName(folder.name, format));
      await rename(join(staging, artifact.file), path);
      progress.note(`wrote ${path} (${artifact.bytes} bytes)`);
      files.push({ format, path, bytes: artifact.bytes, sha256: artifact.sha256 });
    }
    return {
      scan_id: null,
      state: 'completed',
      result: {
        repo_name: folder.name,
        branch: folder.source.branch,
        commit: null,
        source: { type: 'local', url: null },
        encoding: report.encoding,
        num_textual_files: report.files.length,
        num_non_textual_files: report.assets.length,
        summary: report.summary,
        skipped_count: report.skipped.length,
        timings: report.timings,
      },
      files,
    };
  } finally {
    await engine.close();
    await rm(staging, { recursive: true, force: true });
  }
}
