export interface SseEvent {
  event: string;
  data: unknown;
}

/** Read a text/event-stream to its end and return the parsed events. */
export async function readEvents(url: string, timeoutMs = 30_000): Promise<SseEvent[]> {
  const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  if (!response.ok || !response.body) throw new Error(`events: HTTP ${response.status}`);
  const text = await response.text();
  return text
    .split('\n\n')
    .filter((block) => block.startsWith('event:'))
    .map((block) => {
      const lines = block.split('\n');
      const event = lines.find((l) => l.startsWith('event: '))?.slice(7) ?? '';
      const data = lines.find((l) => l.startsWith('data: '))?.slice(6) ?? 'null';
      return { event, data: JSON.parse(data) as unknown };
    });
}
