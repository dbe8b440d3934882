import { copyFile, mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ARTIFACT_FORMATS, toEngineOptions } from '@reposcan/contracts/vocabulary';
import type { SkipReason } from '@reposcan/core';
import { artifactFileName, partFileName, selectFormats, summaryFileName } from '../artifact-files.js';
import type { ScanArgs } from '../cli-args.js';
import type { CliIo } from '../cli-io.js';
import { ScanEndedError, UsageError } from '../exit-codes.js';
import { resolveLocalFolder } from '../local-folder.js';
import { localTokenCounting } from '../local-token-counting.js';
import { chooseOutputFolder, pathInside, realpathOr } from '../output-folder.js';
import { createProgressReporter, progressMode } from '../progress-reporter.js';
import type { ScanOutcome, WrittenFile } from '../scan-outcome.js';
import { userCacheFolder } from '../user-cache-folder.js';
import { openUserTokenCache } from '../user-token-cache.js';

/**
 * `reposcan scan --local <folder>`: the engine runs in this process (no server, no queue) and
 * writes into a hidden staging folder; the chosen artifacts are then moved into place, so the
 * output folder never holds a partial file. Outputs inside the scanned folder are left out of
 * the walk, so a scan never reads an earlier scan's outputs.
 */
export async function scanLocal(args: ScanArgs, io: CliIo): Promise<ScanOutcome> {
  if (args.options.base_ref !== null)
    throw new UsageError(
      '--base-ref (a change digest) works on remote repositories only: scan the repository by its URL, on a server.',
    );
  const folder = await resolveLocalFolder(args.target, io.cwd);
  const output = await chooseOutputFolder(args.output, folder.root, folder.name, io);
  const progress = createProgressReporter(io.stderr, progressMode(io.stderr, args.quiet, io.env));
  if (output.movedBecause) progress.note(`writing to ${output.dir} (${output.movedBecause}; -o chooses)`);
  const [core, tokenCache] = await Promise.all([
    import('@reposcan/core'),
    args.cache ? openUserTokenCache(userCacheFolder(io.env), args.encoding) : null,
  ]);

  const inTree = pathInside(await realpathOr(output.dir), folder.root);
  // Beside the outputs, so they move in by rename; but never inside the scanned tree, where the walk would list it.
  const stagingParent = inTree === null ? output.dir : join(userCacheFolder(io.env), 'staging');
  await mkdir(stagingParent, { recursive: true });
  const staging = await mkdtemp(join(stagingParent, '.reposcan-'));
  const { runScan, DEFAULT_ENGINE_LIMITS } = core;
  // Counting starts on the first content the cache does not know: a repeat scan may need none.
  const counting = localTokenCounting(args.encoding, core);
  try {
    let report;
    try {
      report = await runScan(
        {
          root: folder.walkRoot,
          repoName: folder.name,
          source: folder.source,
          options: toEngineOptions(args.options),
          limits: DEFAULT_ENGINE_LIMITS,
          encoding: args.encoding,
          outDir: staging,
          sourceSkips: ownOutputs(
            inTree,
            pathInside(await realpathOr(staging), folder.root),
            folder.name,
            folder.source.subdir,
          ),
          ...(folder.git ? { git: folder.git } : {}),
        },
        {
          countTokens: counting.count,
          ...(tokenCache ? { tokenCache: { cache: tokenCache.cache, stats: tokenCache.stats } } : {}),
        },
        (p) =>
          progress.update({ state: 'running', phase: p.phase, filesDone: p.files_done, filesTotal: p.files_total }),
      );
    } catch (error) {
      progress.finish();
      throw new ScanEndedError(null, 'failed', 'SCAN_FAILED', (error as Error).message);
    }
    const total = report.summary.total_files;
    progress.update({ state: 'completed', phase: 'done', filesDone: total, filesTotal: total });
    progress.finish();
    const saved = tokenCache?.save();

    // A terminal already shows stdout's list of paths; the notes are for a redirected stdout.
    const note = io.stdout.isTTY ? () => {} : (line: string) => progress.note(line);
    const formats = selectFormats(
      [...report.artifacts.map((a) => a.format), ...(report.parts ?? []).map((o) => o.format)],
      args.formats,
    );
    const files: WrittenFile[] = [];
    for (const format of formats) {
      // An output in parts (--max-tokens) is written as one file per part.
      const parted = report.parts?.find((o) => o.format === format);
      const pieces = parted
        ? parted.parts.map((p) => ({
            ...p,
            path: join(output.dir, partFileName(folder.name, format, p.part, parted.parts.length)),
          }))
        : report.artifacts
            .filter((a) => a.format === format)
            .map((a) => ({ ...a, path: join(output.dir, artifactFileName(folder.name, format)) }));
      for (const piece of pieces) {
        await moveFile(join(staging, piece.file), piece.path);
        note(`wrote ${piece.path} (${piece.bytes} bytes)`);
        files.push({ format, path: piece.path, bytes: piece.bytes, sha256: piece.sha256 });
      }
    }
    // The same record the server publishes as summary.json (and puts in the bundle).
    const summary = `${JSON.stringify(report, null, 2)}\n`;
    const summaryPath = join(output.dir, summaryFileName(folder.name));
    await writeFile(join(staging, 'summary.json'), summary);
    await moveFile(join(staging, 'summary.json'), summaryPath);
    note(`wrote ${summaryPath} (${Buffer.byteLength(summary)} bytes)`);
    await saved;
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
        // Files whose count came from the user's token cache (hits) or was counted (misses); null with --no-cache.
        token_cache: tokenCache ? { ...tokenCache.stats } : null,
        ...(report.secrets === undefined ? {} : { secrets: report.secrets }),
        ...(report.compression === undefined ? {} : { compression: report.compression }),
      },
      files,
      summary_file: { path: summaryPath, bytes: Buffer.byteLength(summary) },
    };
  } finally {
    await counting.close();
    await rm(staging, { recursive: true, force: true });
  }
}

/**
 * What the walk must not read because this command writes it: the output folder when it lies
 * in the scanned tree (`inTree`: its path there), or, when it is the tree's root, the files named
 * like this scan's outputs; and the staging folder if it lies in the tree (a scan of a home folder).
 * Paths in the walk start with `subdir/` when the folder is below the top of its work tree.
 */
function ownOutputs(
  inTree: string | null,
  stagingInTree: string | null,
  name: string,
  subdir: string | null,
): Map<string, SkipReason> | undefined {
  const skips = new Map<string, SkipReason>();
  const walked = (path: string): string => (subdir === null ? path : `${subdir}/${path}`);
  if (stagingInTree !== null && stagingInTree !== '') skips.set(walked(stagingInTree), 'excluded_dir');
  if (inTree !== null && inTree !== '') skips.set(walked(inTree), 'excluded_dir');
  if (inTree === '')
    for (const file of [...ARTIFACT_FORMATS.map((f) => artifactFileName(name, f)), summaryFileName(name)])
      skips.set(walked(file), 'pattern');
  return skips.size > 0 ? skips : undefined;
}

/** rename, or copy and remove where the staging folder is on another file system. */
async function moveFile(from: string, to: string): Promise<void> {
  try {
    await rename(from, to);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
    // Copied under a temporary name first, so `to` never holds a partial file.
    const temp = `${to}.reposcan-partial`;
    await copyFile(from, temp);
    await rename(temp, to);
    await rm(from, { force: true });
  }
}
