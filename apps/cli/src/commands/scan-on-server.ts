import { writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { ReposcanClient } from '@reposcan/client';
import type { ScanAccepted, ScanResult, ScanStatus, Submission, UploadOptions } from '@reposcan/client';
import { downloadToFile, uploadFile } from '@reposcan/client/node';
import { artifactFileName, partFileName, selectFormats, summaryFileName } from '../artifact-files.js';
import type { ScanArgs } from '../cli-args.js';
import type { CliIo } from '../cli-io.js';
import { ScanEndedError, UsageError } from '../exit-codes.js';
import { createProgressReporter, progressMode } from '../progress-reporter.js';
import type { ProgressReporter } from '../progress-reporter.js';
import { chooseOutputFolder } from '../output-folder.js';
import { classifyTarget, gitTokenFor } from '../scan-target.js';
import type { ScanOutcome, WrittenFile } from '../scan-outcome.js';

/**
 * `reposcan scan <target>` against a server: submit without waiting, follow the event stream
 * for progress, then download each artifact (checked against the result's size and SHA-256).
 */
export async function scanOnServer(args: ScanArgs, io: CliIo): Promise<ScanOutcome> {
  const target = await classifyTarget(args.target, io.cwd);
  if (target.kind === 'zip' && args.branch !== undefined)
    throw new UsageError('--branch applies to remote repositories; an uploaded .zip has no branches.');
  if (target.kind !== 'remote' && args.options.base_ref !== null)
    throw new UsageError(
      '--base-ref (a change digest) applies to remote repositories; a folder or a .zip has no commits to compare.',
    );
  const gitToken = gitTokenFor(target, args.gitToken);
  const client = new ReposcanClient({
    baseUrl: args.server,
    ...(args.apiKey === undefined ? {} : { apiKey: args.apiKey }),
  });
  const progress = createProgressReporter(io.stderr, progressMode(io.stderr, args.quiet, io.env));
  // A folder the server reads gets the same rule as --local: no default output inside it.
  const output = await chooseOutputFolder(
    args.output,
    target.kind === 'folder' ? target.path : null,
    basename(target.kind === 'folder' ? target.path : 'repository'),
    io,
  );
  if (output.movedBecause) progress.note(`writing to ${output.dir} (${output.movedBecause}; -o chooses)`);
  const options: UploadOptions = {
    ...args.options,
    ...(args.callbackUrl === undefined ? {} : { callback_url: args.callbackUrl }),
  };
  const submission: Submission =
    target.kind === 'zip'
      ? await uploadFile(client, target.file, options, { wait: false })
      : await client.scan(
          {
            repo_path: target.kind === 'remote' ? target.repoPath : target.path,
            branch: args.branch,
            ...(gitToken === undefined ? {} : { git_token: gitToken }),
            ...options,
          },
          { wait: false },
        );

  const result =
    submission.kind === 'completed' ? submission.result : await followToEnd(client, submission.accepted, progress);
  // A terminal already shows stdout's list of paths; the notes are for a redirected stdout.
  const note = io.stdout.isTTY ? () => {} : (line: string) => progress.note(line);
  const files = await downloadArtifacts(client, result, args, output.dir, note);
  const summary = `${JSON.stringify(await client.summary(result.scan_id), null, 2)}\n`;
  const summaryPath = join(output.dir, summaryFileName(result.repo_name));
  await writeFile(summaryPath, summary);
  note(`wrote ${summaryPath} (${Buffer.byteLength(summary)} bytes)`);
  if (args.cleanup) {
    await client.cleanup(result.scan_id);
    progress.note(`deleted scan ${result.scan_id} from the server`);
  }
  return {
    scan_id: result.scan_id,
    state: 'completed',
    result,
    files,
    summary_file: { path: summaryPath, bytes: Buffer.byteLength(summary) },
  };
}

async function followToEnd(
  client: ReposcanClient,
  accepted: ScanAccepted,
  progress: ProgressReporter,
): Promise<ScanResult> {
  let last: ScanStatus | null = null;
  for await (const { data } of client.follow(accepted)) {
    last = data;
    progress.update({
      state: data.state,
      phase: data.progress.phase,
      filesDone: data.progress.files_done,
      filesTotal: data.progress.files_total,
    });
  }
  progress.finish();
  if (last?.state === 'completed' && last.result) return last.result;
  if (last?.state === 'failed')
    throw new ScanEndedError(
      accepted.scan_id,
      'failed',
      last.error?.code ?? 'SCAN_FAILED',
      last.error?.message ?? 'The scan failed without a reason.',
    );
  throw new ScanEndedError(
    accepted.scan_id,
    'cancelled',
    'SCAN_CANCELLED',
    'The scan was cancelled (or deleted) before it finished.',
  );
}

async function downloadArtifacts(
  client: ReposcanClient,
  result: ScanResult,
  args: ScanArgs,
  output: string,
  note: (line: string) => void,
): Promise<WrittenFile[]> {
  const produced = Object.keys(result.artifacts) as Array<WrittenFile['format']>;
  const formats = selectFormats(produced, args.formats);
  const missing = (args.formats ?? []).filter((f) => !formats.includes(f));
  if (missing.length > 0)
    throw new Error(`the scan did not produce ${missing.join(', ')} (it produced ${produced.join(', ')}).`);
  const written: WrittenFile[] = [];
  for (const format of formats) {
    const parts = result.artifacts[format]?.parts;
    // An output in parts (--max-tokens) is written as one file per part.
    for (const part of parts ?? [null]) {
      const path = join(
        output,
        part === null
          ? artifactFileName(result.repo_name, format)
          : partFileName(result.repo_name, format, part.part, parts?.length ?? 1),
      );
      const saved = await downloadToFile(client, result.scan_id, format, path, {
        expected: part ?? result.artifacts[format],
        ...(part === null ? {} : { part: part.part }),
      });
      note(`wrote ${path} (${saved.bytes} bytes)`);
      written.push(saved);
    }
  }
  return written;
}
