// Entry of the artifact thread (io-threads.ts): renders, hashes and writes the text artifacts of
// every scan of this process, one TextArtifactWriter per scan, so the event loop that reads,
// classifies and orders files does not also escape and copy every byte three times.
import { TEXT_RENDERERS } from '../artifacts/text-renderers.js';
import { TextArtifactWriter } from '../artifacts/write-text-artifacts.js';
import { serveIoRequests } from './serve-io-requests.js';

const writers = new Map<number, TextArtifactWriter>();

function writer(id: number): TextArtifactWriter {
  const found = writers.get(id);
  if (found === undefined) throw new Error(`no artifact writer ${id} on this thread (it was finished, aborted or lost with an earlier thread)`);
  return found;
}

serveIoRequests(async (request) => {
  switch (request.kind) {
    case 'artifacts-open':
      writers.set(request.writer, await TextArtifactWriter.open(request.outDir, request.formats.map((format) => TEXT_RENDERERS[format]), request.lite));
      return null;
    case 'artifacts-begin':
      return writer(request.writer).begin(request.head);
    case 'artifacts-add':
      return writer(request.writer).addFiles(request.blocks);
    case 'artifacts-finish': {
      const written = await writer(request.writer).finish(request.ctx);
      writers.delete(request.writer);
      return written;
    }
    case 'artifacts-abort': {
      const aborted = writers.get(request.writer);
      writers.delete(request.writer);
      return aborted?.abort();
    }
    default:
      throw new TypeError(`the artifact thread does not take '${request.kind}' requests`);
  }
});
