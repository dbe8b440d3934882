/** One dispatched server-sent event: its `event` name (default `message`) and joined `data`. */
export interface RawSseEvent {
  event: string;
  data: string;
  id: string | null;
}

/**
 * Parse a text/event-stream body as the HTML standard says: lines end in LF, CRLF or CR;
 * `:` starts a comment (keep-alives); `data` lines join with LF; a blank line dispatches;
 * an event without data is not dispatched. Works on any ReadableStream of bytes, so it runs
 * in browsers and Node alike.
 */
export async function* parseEventStream(body: ReadableStream<Uint8Array>): AsyncGenerator<RawSseEvent> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  let event = '';
  let data: string[] = [];
  let id: string | null = null;
  let first = true;
  try {
    for (let done = false; !done;) {
      const chunk = await reader.read();
      done = chunk.done;
      if (!chunk.done) buffer += chunk.value;
      if (first && buffer.length > 0) {
        if (buffer.charCodeAt(0) === 0xfeff) buffer = buffer.slice(1);
        first = false;
      }
      for (;;) {
        const match = /\r\n|\r|\n/.exec(buffer);
        // A lone CR at the end may be the first half of CRLF: wait for the next chunk, if any.
        if (!match || (!done && match[0] === '\r' && match.index === buffer.length - 1)) break;
        const line = buffer.slice(0, match.index);
        buffer = buffer.slice(match.index + match[0].length);
        if (line === '') {
          if (data.length > 0) yield { event: event || 'message', data: data.join('\n'), id };
          event = '';
          data = [];
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon === -1 ? line : line.slice(0, colon);
        let value = colon === -1 ? '' : line.slice(colon + 1);
        if (value.startsWith(' ')) value = value.slice(1);
        if (field === 'event') event = value;
        else if (field === 'data') data.push(value);
        else if (field === 'id' && !value.includes('\0')) id = value;
      }
    }
  } finally {
    // Stops the download when the consumer leaves the loop early.
    await reader.cancel().catch(() => {});
  }
}
