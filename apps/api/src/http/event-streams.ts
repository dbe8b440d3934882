import type { ServerResponse } from 'node:http';
import { ScanError } from '@reposcan/contracts';
import { eventsUrl } from '../services/scan-service.js';

/** A stream's hold on its place among the open ones. */
export interface EventStreamSlot {
  /** The stream of `scanId` is open (headers sent): it gets the shared heartbeat from now on. */
  live(res: ServerResponse, scanId: string): void;
  /** Gives the place back; safe to call more than once. */
  release(): void;
}

export interface EventStreamLimits {
  /** Streams one client (the rate limit's client address) may hold open. */
  perClient: number;
  /** Streams this process holds open at most. */
  total: number;
  /** Between two heartbeats (an SSE comment) on every open stream. */
  heartbeatMs?: number;
}

/**
 * Proxies and load balancers close a connection that stays silent for long (often 60 s); an
 * idle scan's stream gets a comment line this often so it stays open.
 */
const HEARTBEAT_MS = 15_000;
/** A client at its cap can close one of its own streams at once: retrying soon is enough. */
const CLIENT_RETRY_AFTER_SECONDS = 5;
/** A full process frees places as other clients' scans finish, typically within seconds to a minute. */
const PROCESS_RETRY_AFTER_SECONDS = 15;
/** After a `stopping` event: long enough for a balancer to route elsewhere, short enough to miss little. */
const RECONNECT_AFTER_MS = 1_000;

/**
 * The open event streams of this process: how many each client holds, how many in all, and one
 * heartbeat timer for all of them (not one per stream).
 */
export class EventStreams {
  private readonly byClient = new Map<string, number>();
  /** Each open stream and the scan it follows. */
  private readonly live = new Map<ServerResponse, string>();
  private heartbeat: NodeJS.Timeout | null = null;
  private count = 0;

  constructor(private readonly limits: EventStreamLimits) {}

  /** Open streams now. */
  get size(): number {
    return this.count;
  }

  /** Takes a place for one more stream of `client`, or refuses: 429 over the client's cap, 503 over the process's. */
  open(client: string): EventStreamSlot {
    const held = this.byClient.get(client) ?? 0;
    if (held >= this.limits.perClient) {
      throw new ScanError(
        'TOO_MANY_EVENT_STREAMS',
        `This client already has ${held} event streams open (limit ${this.limits.perClient}, MAX_EVENT_STREAMS_PER_CLIENT). Close one you no longer read, or follow the scan with GET /v1/scans/{id}, then retry.`,
        { retryAfterSeconds: CLIENT_RETRY_AFTER_SECONDS },
      );
    }
    if (this.count >= this.limits.total) {
      throw new ScanError(
        'EVENT_STREAMS_FULL',
        `This server has as many event streams open as it takes (${this.limits.total}, MAX_EVENT_STREAMS). Retry after ${PROCESS_RETRY_AFTER_SECONDS} s, or follow the scan with GET /v1/scans/{id} meanwhile.`,
        { retryAfterSeconds: PROCESS_RETRY_AFTER_SECONDS },
      );
    }
    this.byClient.set(client, held + 1);
    this.count++;
    let res: ServerResponse | null = null;
    let released = false;
    return {
      live: (response, scanId) => {
        if (released) return;
        res = response;
        this.live.set(response, scanId);
        this.heartbeat ??= setInterval(() => this.beat(), this.limits.heartbeatMs ?? HEARTBEAT_MS);
      },
      release: () => {
        if (released) return;
        released = true;
        const left = (this.byClient.get(client) ?? 1) - 1;
        if (left > 0) this.byClient.set(client, left);
        else this.byClient.delete(client);
        this.count--;
        if (res) this.live.delete(res);
        if (this.live.size === 0 && this.heartbeat) {
          clearInterval(this.heartbeat);
          this.heartbeat = null;
        }
      },
    };
  }

  /**
   * Ends every open stream with a last `stopping` event, so a shutting-down server is not held
   * open until their scans finish. The scan carries on: an EventSource client reconnects by
   * itself (after `retry`, to another instance behind a balancer); others are told to.
   */
  endAll(): void {
    // The connection goes too: left idle it would hold the server until its keep-alive timeout.
    for (const [res, scanId] of this.live) {
      if (res.writableEnded) continue;
      res.write(
        `event: stopping\nretry: ${RECONNECT_AFTER_MS}\ndata: ${JSON.stringify({
          code: 'SERVER_STOPPING',
          scan_id: scanId,
          detail: `This server is stopping; the scan carries on. Reconnect to ${eventsUrl(scanId)} to keep following it.`,
        })}\n\n`,
      );
      // Taken now: a finished response no longer holds its socket.
      const socket = res.socket;
      res.end(() => socket?.destroy());
    }
  }

  private beat(): void {
    for (const res of this.live.keys()) if (!res.writableEnded) res.write(': keep-alive\n\n');
  }
}
