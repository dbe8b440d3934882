// Entry of the long-lived io threads (io-threads.ts): batches of reads, with blocking system calls,
// which cost a fraction of the async ones and block only this thread, a preview's token estimates,
// secret checks, compressed code and the SHA-256 of artifacts being written. It imports nothing
// else up front, so a kept thread costs little memory: secretlint is loaded by the first text that
// may hold a secret (detect-secrets.ts), tree-sitter on the first transform (compress-code.ts).
import { serveThread } from '../threads/serve-thread.js';
import { estimateTokensFromBytes } from '../tokens/estimate-tokens.js';
import { endHash, hashUpTo } from './appended-file-hash.js';
import { hashOutput } from '../artifacts/spliced-artifact.js';
import type { IoRequest } from './io-protocol.js';
import { readFilesSync } from './read-file-bytes.js';
// Its type only: the module (and secretlint behind it) is imported on the first check.
import type { detectSecrets } from '../secrets/detect-secrets.js';
import type { transformCode } from '../compress/compress-code.js';

let detect: Promise<typeof detectSecrets> | null = null;
let transform: Promise<typeof transformCode> | null = null;

serveThread((request: IoRequest) => {
  if (request.kind === 'read') return readFilesSync(request.requests, request.maxBytes);
  if (request.kind === 'estimate') return request.contents.map(estimateTokensFromBytes);
  if (request.kind === 'hash') return hashUpTo(request.id, request.path, request.length);
  if (request.kind === 'hash-end') return endHash(request.id);
  if (request.kind === 'hash-output') return hashOutput(request.path);
  if (request.kind === 'secrets') {
    detect ??= import('../secrets/detect-secrets.js').then((module) => module.detectSecrets);
    return detect.then((detectSecrets) => detectSecrets(request.contents, request.names));
  }
  if (request.kind === 'compress') {
    transform ??= import('../compress/compress-code.js').then((module) => module.transformCode);
    return transform.then((transformCode) => transformCode(request.contents, request.languages, request.transform));
  }
  throw new TypeError(`a file thread does not take '${request.kind}' requests`);
});
