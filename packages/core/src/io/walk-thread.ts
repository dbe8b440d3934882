// Entry of a walk's own io thread (io-threads.ts): the walk with blocking system calls, its files
// sent on in chunks as the output reaches them.
import { serveThread } from '../threads/serve-thread.js';
import { syncWalkFs } from '../walk/node-walk-fs.js';
import { walkTreeInto } from '../walk/walk-tree.js';
import type { IoRequest } from './io-protocol.js';

serveThread((request: IoRequest, { partial }) => {
  if (request.kind !== 'walk') throw new TypeError(`a walk thread does not take '${request.kind}' requests`);
  return walkTreeInto(request.input, partial, syncWalkFs);
});
