import type { SseEvent } from './sse.js';

/** An event stream held open: its events as they arrive, until the server ends it or `close()`. */
export interface LiveStream {
  status: number;
  headers: Headers;
  /** The error envelope when the stream was refused. */
  body: { code?: string; detail?: string } | null;
  events: SseEvent[];
  /** Comment lines (heartbeats) seen. */
  comments: number;
  /** Resolves when the stream is over, whoever ended it; `byServer` says the server did. */
  ended: Promise<{ byServer: boolean }>;
  /** Resolves once at least `n` events have arrived (rejects after 10 s or if the stream ends first). */
  waitFor(n: number): Promise<SseEvent[]>;
  close(): void;
}

/** Opens `url` as an event stream and keeps reading it in the background. */
export async function openStream(url: string, headers: Record<string, string> = {}): Promise<LiveStream> {
  const abort = new AbortController();
  const response = await fetch(url, { headers, signal: abort.signal });
  const events: SseEvent[] = [];
  const waiters = new Set<() => void>();
  const notify = (): void => {
    for (const w of [...waiters]) w();
  };
  let over = false;
  const stream: LiveStream = {
    status: response.status,
    headers: response.headers,
    body: null,
    events,
    comments: 0,
    ended: Promise.resolve({ byServer: true }),
    waitFor: (n) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => done(new Error(`waited 10 s for event ${n}; have ${JSON.stringify(events.map((e) => e.event))}`)),
          10_000,
        );
        const check = (): void => {
          if (events.length >= n) done();
          else if (over) done(new Error(`the stream ended after ${events.length} events, before event ${n}`));
        };
        const done = (error?: Error): void => {
          clearTimeout(timer);
          waiters.delete(check);
          if (error) reject(error);
          else resolve(events.slice(0, n));
        };
        waiters.add(check);
        check();
      }),
    close: () => abort.abort(),
  };
  if (response.status !== 200 || !response.body) {
    stream.body = (await response.json()) as LiveStream['body'];
    return stream;
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  stream.ended = (async () => {
    let buffer = '';
    let byServer = false;
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) {
          byServer = true;
          break;
        }
        buffer += value;
        let end;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (block.startsWith(':')) stream.comments++;
          const lines = block.split('\n');
          const event = lines.find((l) => l.startsWith('event: '))?.slice(7);
          const data = lines.find((l) => l.startsWith('data: '))?.slice(6);
          if (event !== undefined) events.push({ event, data: JSON.parse(data ?? 'null') as unknown });
        }
        notify();
      }
    } catch {
      // Aborted by close().
    }
    over = true;
    notify();
    return { byServer };
  })();
  return stream;
}
