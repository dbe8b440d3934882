// The thread side of worker-thread.ts, shared by every thread entry: requests are answered one at
// a time in the order they arrive, errors sent back through the codec, and the work runs at a low
// CPU priority. Imports nothing of the engine, so a lean entry stays lean.
import { parentPort, workerData } from 'node:worker_threads';
import { lowerThreadPriority } from '../io/background-priority.js';
import { encodeError } from './thread-protocol.js';
import type { ThreadReply, ThreadRequest } from './thread-protocol.js';

/** What an answer gets beside the body: the cancel of its request, and a way to send parts before its value. */
export interface RequestContext {
  signal: AbortSignal;
  partial: (value: unknown) => void;
}

/** The `data` its WorkerThread was given. */
export function threadData<T>(): T {
  return (workerData as { data: T }).data;
}

/** Serves this thread's requests with `answer`, then tells the caller it is ready. */
export function serveThread<B>(answer: (body: B, context: RequestContext) => unknown): void {
  if (parentPort === null) throw new Error('a thread entry must run in a worker thread');
  const port = parentPort;
  // Background work: the process's event loop gets the CPU first.
  lowerThreadPriority();
  const running = new Map<number, AbortController>();
  let turn: Promise<void> = Promise.resolve();
  port.on('message', (request: ThreadRequest) => {
    if ('cancel' in request) {
      running.get(request.cancel)?.abort(new Error('request cancelled'));
      return;
    }
    const { id } = request;
    const controller = new AbortController();
    running.set(id, controller);
    const context: RequestContext = {
      signal: controller.signal,
      partial: (value) => port.postMessage({ id, partial: value } satisfies ThreadReply),
    };
    turn = turn.then(async () => {
      let reply: ThreadReply;
      try {
        reply = { id, ok: true, value: await answer(request.body as B, context) };
      } catch (error) {
        reply = { id, ok: false, error: encodeError(error) };
      }
      running.delete(id);
      port.postMessage(reply);
    });
  });
  port.postMessage({ ready: true } satisfies ThreadReply);
}
