import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { codeBlocks, readReadme } from './readme.js';

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

/** The check README gives receivers, taken from README.md as a user copies it: `verifyReposcan(header, rawBody, secret)`. */
const readmeVerify = await loadReadmeVerifier();

/** Whether a delivery's signature header passes README's check of `body` with `secret`. */
export function verifySignature(header: string | undefined, body: string, secret: string): boolean {
  return header !== undefined && readmeVerify(header, body, secret);
}

async function loadReadmeVerifier(): Promise<(header: string, rawBody: string, secret: string) => boolean> {
  const snippet = codeBlocks(await readReadme(), 'js').find((block) => block.includes('function verifyReposcan('));
  if (snippet === undefined) throw new Error('README.md has no js block defining verifyReposcan');
  const dir = await mkdtemp(join(tmpdir(), 'reposcan-readme-verify-'));
  try {
    const file = join(dir, 'verify.mjs');
    await writeFile(file, `${snippet}\nexport { verifyReposcan };\n`);
    const loaded = (await import(pathToFileURL(file).href)) as {
      verifyReposcan: (header: string, rawBody: string, secret: string) => boolean;
    };
    return loaded.verifyReposcan;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
