import { describe, expect, it } from 'vitest';
import { parseEventStream } from '../src/sse.js';
import type { RawSseEvent } from '../src/sse.js';

/** A byte stream delivering `chunks` one by one, to cut lines and UTF-8 sequences anywhere. */
function streamOf(chunks: Array<string | Uint8Array>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(typeof chunk === 'string' ? encoder.encode(chunk) : chunk);
      controller.close();
    },
  });
}

async function collect(chunks: Array<string | Uint8Array>): Promise<RawSseEvent[]> {
  const events: RawSseEvent[] = [];
  for await (const event of parseEventStream(streamOf(chunks))) events.push(event);
  return events;
}

describe('parseEventStream', () => {
  it('reads events, skips comments (keep-alives) and defaults the name to message', async () => {
    expect(await collect(['event: state\ndata: {"a":1}\n\n', ': keep-alive\n\n', 'data: plain\n\n'])).toEqual([
      { event: 'state', data: '{"a":1}', id: null },
      { event: 'message', data: 'plain', id: null },
    ]);
  });

  it('accepts CRLF and CR line ends, even with CRLF split across chunks', async () => {
    expect(await collect(['event: a\r', '\ndata: 1\r\n\r', '\nevent: b\rdata: 2\r\r'])).toEqual([
      { event: 'a', data: '1', id: null },
      { event: 'b', data: '2', id: null },
    ]);
  });

  it('joins data lines, keeps one space after the colon only, and reads ids', async () => {
    expect(await collect(['id: 7\ndata:  two spaces\ndata:x\n\n'])).toEqual([
      { event: 'message', data: ' two spaces\nx', id: '7' },
    ]);
  });

  it('decodes UTF-8 split between chunks and drops a leading BOM', async () => {
    const bytes = new TextEncoder().encode('\uFEFFdata: café ✓\n\n');
    expect(await collect([bytes.slice(0, 10), bytes.slice(10, 15), bytes.slice(15)])).toEqual([
      { event: 'message', data: 'café ✓', id: null },
    ]);
  });

  it('does not dispatch an event without data, nor an unterminated last one', async () => {
    expect(await collect(['event: empty\n\n', 'data: cut off'])).toEqual([]);
  });
});
