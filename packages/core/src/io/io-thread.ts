// Worker-thread entry of the io threads (io-threads.ts): walks, batches of reads and artifacts with
// blocking system calls, which cost a fraction of the async ones and block only this thread.
// Requests are answered one at a time, in the order they arrive.
import { parentPort } from 'node:worker_threads';
import { assembleArtifactSync } from '../artifacts/assemble-artifact.js';
import { walkTree } from '../walk/walk-tree.js';
import { syncWalkFs } from '../walk/node-walk-fs.js';
import { lowerThreadPriority } from './background-priority.js';
import type { IoReply, IoRequest } from './io-protocol.js';
import { readFilesSync } from './read-file-bytes.js';

const port = parentPort;
if (port === null) throw new Error('io-thread must run in a worker thread');
// Walks and reads are background work: the process's event loop gets the CPU first.
lowerThreadPriority();

async function answer(request: IoRequest): Promise<unknown> {
  if (request.kind === 'walk') return walkTree(request.input, syncWalkFs);
  if (request.kind === 'assemble') return assembleArtifactSync(request.request);
  return readFilesSync(request.requests, request.maxBytes);
}

let turn: Promise<void> = Promise.resolve();
port.on('message', (request: IoRequest) => {
  turn = turn.then(async () => {
    let reply: IoReply;
    try {
      reply = { id: request.id, ok: true, value: await answer(request) };
    } catch (error) {
      const e = error as { name?: string; message?: string; code?: unknown };
      reply = { id: request.id, ok: false, error: { name: e.name ?? 'Error', message: e.message ?? String(error), ...(typeof e.code === 'string' ? { code: e.code } : {}) } };
    }
    port.postMessage(reply);
  });
});
