// startGitBatch in a worker thread (a preview's thread runs clones). When a thread exits, Node
// closes every descriptor fs opened in it that fs did not close; one handed to a socket, which
// closed it, is closed a second time then, though its number may belong to another thread by now.
// A preview thread's replacement lost its event loop's epoll descriptor that way, and the process
// aborted.
import { execFileSync } from 'node:child_process';
import { closeSync, fstatSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { WorkerThread } from '@reposcan/core';
import type { BatchJob } from './helpers/git-batch-thread.js';

const work = mkdtempSync(path.join(os.tmpdir(), 'reposcan-batch-thread-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

it('a thread that ran a batch git closes none of the process descriptors it does not own when it ends', async () => {
  const repoDir = path.join(work, 'repo');
  execFileSync('git', ['init', '-q', repoDir]);
  writeFileSync(path.join(repoDir, 'a.txt'), 'hello\n');
  const blob = execFileSync('git', ['hash-object', '-w', 'a.txt'], { cwd: repoDir, encoding: 'utf8' }).trim();
  const thread = new WorkerThread({
    entry: new URL('./helpers/git-batch-thread.ts', import.meta.url),
    label: 'git batch thread',
  });
  await thread.ready;
  const job: BatchJob = { repoDir, blob, homeRoot: work };
  expect(await thread.request<string>(job)).toBe(`${blob} blob 6\nhello\n\n`);
  // The numbers the thread's descriptors had are free again: these take the lowest of them.
  const held = Array.from({ length: 32 }, () => openSync('/dev/null', 'r'));
  try {
    await thread.terminate();
    const closed = held.filter((fd) => {
      try {
        fstatSync(fd);
        return false;
      } catch {
        return true;
      }
    });
    expect(closed).toEqual([]);
  } finally {
    for (const fd of held)
      try {
        closeSync(fd);
      } catch {
        // closed under us: what the test reports
      }
  }
});
