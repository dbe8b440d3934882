// Entry of the long-lived io threads (io-threads.ts): batches of reads, with blocking system calls,
// which cost a fraction of the async ones and block only this thread, and a preview's token
// estimates. It imports nothing else, so a kept thread costs little memory.
import { serveThread } from '../threads/serve-thread.js';
import { estimateTokensFromBytes } from '../tokens/estimate-tokens.js';
import type { IoRequest } from './io-protocol.js';
import { readFilesSync } from './read-file-bytes.js';

serveThread((request: IoRequest) => {
  if (request.kind === 'read') return readFilesSync(request.requests, request.maxBytes);
  if (request.kind === 'estimate') return request.contents.map(estimateTokensFromBytes);
  throw new TypeError(`a file thread does not take '${request.kind}' requests`);
});
