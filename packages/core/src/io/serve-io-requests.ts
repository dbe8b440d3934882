// The request loop shared by the io threads' entries (file-thread.ts, walk-thread.ts): requests
// are answered one at a time, in the order they arrive, errors sent back by name, message and code.
import { parentPort } from 'node:worker_threads';
import type { MessagePort } from 'node:worker_threads';
import { lowerThreadPriority } from './background-priority.js';
import type { IoReply, IoRequest } from './io-protocol.js';

/** Serves this thread's requests with `answer`; the work is background work, at a low priority. */
export function serveIoRequests(answer: (request: IoRequest, port: MessagePort) => unknown): void {
  if (parentPort === null) throw new Error('an io thread entry must run in a worker thread');
  const port = parentPort;
  // The process's event loop gets the CPU first.
  lowerThreadPriority();
  let turn: Promise<void> = Promise.resolve();
  port.on('message', (request: IoRequest) => {
    turn = turn.then(async () => {
      let reply: IoReply;
      try {
        reply = { id: request.id, ok: true, value: await answer(request, port) };
      } catch (error) {
        const e = error as { name?: string; message?: string; code?: unknown };
        reply = { id: request.id, ok: false, error: { name: e.name ?? 'Error', message: e.message ?? String(error), ...(typeof e.code === 'string' ? { code: e.code } : {}) } };
      }
      port.postMessage(reply);
    });
  });
}
