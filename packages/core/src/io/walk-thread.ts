// Entry of a walk's own io thread (io-threads.ts): the walk with blocking system calls, its files
// sent on in chunks as the output reaches them.
import { syncWalkFs } from '../walk/node-walk-fs.js';
import { walkTreeInto } from '../walk/walk-tree.js';
import type { IoReply } from './io-protocol.js';
import { serveIoRequests } from './serve-io-requests.js';

serveIoRequests((request, port) => {
  if (request.kind !== 'walk') throw new TypeError(`a walk thread does not take '${request.kind}' requests`);
  return walkTreeInto(request.input, (files) => port.postMessage({ id: request.id, partial: files } satisfies IoReply), syncWalkFs);
});
