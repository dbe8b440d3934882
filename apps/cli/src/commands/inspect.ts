import { ReposcanClient } from '@reposcan/client';
import type { InspectResult } from '@reposcan/client';
import { toEngineOptions, withOutputDefaults } from '@reposcan/contracts/vocabulary';
import type { InspectArgs } from '../cli-args.js';
import type { CliIo } from '../cli-io.js';
import { UsageError } from '../exit-codes.js';
import { resolveLocalFolder } from '../local-folder.js';
import { classifyTarget, gitTokenFor } from '../scan-target.js';

/** `reposcan inspect <target>`: the API's preview, or with --local the engine's, in the API's shape. */
export async function inspect(args: InspectArgs, io: CliIo): Promise<InspectResult> {
  return args.local ? inspectLocal(args, io) : inspectOnServer(args, io);
}

async function inspectOnServer(args: InspectArgs, io: CliIo): Promise<InspectResult> {
  const target = await classifyTarget(args.target, io.cwd);
  if (target.kind === 'zip')
    throw new UsageError(
      'inspect previews a repository URL or a folder; a .zip can only be scanned (reposcan scan file.zip).',
    );
  const gitToken = gitTokenFor(target, args.gitToken);
  const client = new ReposcanClient({
    baseUrl: args.server,
    ...(args.apiKey === undefined ? {} : { apiKey: args.apiKey }),
  });
  return client.inspect({
    repo_path: target.kind === 'remote' ? target.repoPath : target.path,
    branch: args.branch,
    ...(gitToken === undefined ? {} : { git_token: gitToken }),
    ...args.options,
    ...(args.maxTokensPerPart === null ? {} : { max_tokens_per_part: args.maxTokensPerPart }),
  });
}

async function inspectLocal(args: InspectArgs, io: CliIo): Promise<InspectResult> {
  const folder = await resolveLocalFolder(args.target, io.cwd);
  const { createEngine, DEFAULT_ENGINE_LIMITS, toInspectResult } = await import('@reposcan/core');
  // Its threads end with the preview, so the process can exit.
  const engine = createEngine({ tokenThreads: 0 });
  const report = await engine
    .inspect({
      root: folder.walkRoot,
      repoName: folder.name,
      source: folder.source,
      options: toEngineOptions(withOutputDefaults(args.options)),
      limits: DEFAULT_ENGINE_LIMITS,
      ...(folder.git ? { git: folder.git } : {}),
    })
    .finally(() => engine.close());
  return toInspectResult(report, null, args.maxTokensPerPart);
}
