// Thread entry of git-batch-in-thread.test.ts: one `git cat-file --batch` through startGitBatch in
// a worker thread, as a preview's thread runs it.
import { serveThread } from '@reposcan/core';
import { parseRepoPath } from '../../../src/remote/parse-repo-path.js';
import { createGitEnv } from '../../../src/remote/git-env.js';
import { startGitBatch } from '../../../src/remote/git-process.js';

export interface BatchJob {
  repoDir: string;
  blob: string;
  homeRoot: string;
}

serveThread(async ({ repoDir, blob, homeRoot }: BatchJob, { signal }) => {
  const parsed = parseRepoPath('https://git.reposcan.test/acme/widgets');
  if (parsed.kind !== 'remote') throw new Error('not a remote');
  const gitEnv = await createGitEnv(parsed.url, { allowHttp: false, pinnedAddresses: ['127.0.0.1'], homeRoot });
  let answer = '';
  const git = await startGitBatch(['cat-file', '--batch'], { gitEnv, cwd: repoDir, signal }, (chunk) => {
    answer += Buffer.from(chunk).toString('utf8');
  });
  git.stdin.write(`${blob}\n`);
  git.end();
  await git.exited;
  return answer;
});
