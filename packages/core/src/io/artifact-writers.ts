// The artifact writers a file thread holds (io-threads.ts): each scan's TextArtifactWriter lives on
// the thread that opened it, so the event loop that reads, classifies and orders files does not
// also escape, hash and copy every byte three times.
import { TEXT_RENDERERS } from '../artifacts/text-renderers.js';
import { TextArtifactWriter } from '../artifacts/write-text-artifacts.js';
import type { ArtifactRequest } from './io-protocol.js';

const writers = new Map<number, TextArtifactWriter>();

function writer(id: number): TextArtifactWriter {
  const found = writers.get(id);
  if (found === undefined) throw new Error(`no artifact writer ${id} on this thread (it was finished, aborted or lost with an earlier thread)`);
  return found;
}

export async function answerArtifactRequest(request: ArtifactRequest): Promise<unknown> {
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
  }
}
