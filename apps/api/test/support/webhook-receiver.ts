import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedDelivery {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
  /** When the receiver's side of the connection closed (a hung request: when the sender gave up). */
  closedAt?: number;
}

/** How the receiver answers its n-th request: a status, a redirect, or never. */
export type Answer = number | { redirect: string } | 'hang';

export interface WebhookReceiver {
  url: string;
  deliveries: ReceivedDelivery[];
  close(): Promise<void>;
}

/** A node http server on loopback that records every POST and answers from `answers` (the last one repeats). */
export async function startReceiver(answers: Answer[] = [200]): Promise<WebhookReceiver> {
  const deliveries: ReceivedDelivery[] = [];
  const hung: ServerResponse[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      const delivery: ReceivedDelivery = { path: req.url ?? '', headers: req.headers, body, at: Date.now() };
      deliveries.push(delivery);
      res.on('close', () => (delivery.closedAt = Date.now()));
      const answer = answers[Math.min(deliveries.length - 1, answers.length - 1)] ?? 200;
      if (answer === 'hang') return void hung.push(res);
      if (typeof answer === 'object') return void res.writeHead(302, { Location: answer.redirect }).end();
      res.writeHead(answer, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    deliveries,
    close: () =>
      new Promise((resolve) => {
        for (const res of hung) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The receiver's check, as README shows it: HMAC-SHA256 of "<t>.<body>", compared in constant time, and a recent t. */
export function verifySignature(
  header: string | undefined,
  body: string,
  secret: string,
  toleranceSeconds = 300,
): boolean {
  const parts = Object.fromEntries((header ?? '').split(',').map((kv) => kv.split('=', 2) as [string, string]));
  const t = Number(parts.t);
  if (!Number.isInteger(t) || Math.abs(Date.now() / 1000 - t) > toleranceSeconds) return false;
  const expected = Buffer.from(createHmac('sha256', secret).update(`${t}.${body}`).digest('hex'));
  const given = Buffer.from(parts.v1 ?? '');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
