import { spawn } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';

// A git smart-HTTP server on loopback: `git http-backend` run as CGI per request, serving the
// bare repositories under `projectRoot`. Tests never reach the internet.

export interface GitHttpServer {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  port: number;
  /** Every request path seen, in order (query string included). */
  requests: string[];
  /** Changes the throttle for data sent from now on (undefined: full speed). */
  setBytesPerSecond(bytesPerSecond: number | undefined): void;
  close(): Promise<void>;
}

export interface GitHttpServerOptions {
  /** Path prefix → absolute URL: any request under the prefix is answered `302 Location: <url><rest>`. */
  redirects?: Record<string, string>;
  /** Slows response bodies down to about this many bytes per second. */
  bytesPerSecond?: number;
  /**
   * HTTP basic authentication, as a private repository on a git host: a request without these
   * credentials gets 401 with a challenge (`username` unset: any user name, as Gitea does). A
   * function decides per path (`null`: that path is public).
   */
  auth?: BasicAuth | ((path: string) => BasicAuth | null);
  /**
   * A careless host: answers every request that carries credentials with a git `ERR` line quoting
   * them, which git prints. Nothing must come of it beyond `***`.
   */
  echoCredentials?: boolean;
}

export interface BasicAuth {
  username?: string;
  password: string;
}

/** Whether `header` (an Authorization header) carries `auth`'s credentials. */
function authorized(header: string | undefined, auth: BasicAuth): boolean {
  const match = /^Basic ([A-Za-z0-9+/=]+)$/i.exec(header ?? '');
  if (!match) return false;
  const pair = Buffer.from(match[1] as string, 'base64').toString('utf8');
  const colon = pair.indexOf(':');
  if (colon < 0) return false;
  const [username, password] = [pair.slice(0, colon), pair.slice(colon + 1)];
  return password === auth.password && (auth.username === undefined || username === auth.username);
}

export async function startGitHttpServer(
  projectRoot: string,
  options: GitHttpServerOptions = {},
): Promise<GitHttpServer> {
  const requests: string[] = [];
  const throttle = { bytesPerSecond: options.bytesPerSecond };
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    requests.push(url.pathname + url.search);
    for (const [prefix, target] of Object.entries(options.redirects ?? {})) {
      if (url.pathname.startsWith(prefix)) {
        res.writeHead(302, { Location: target + url.pathname.slice(prefix.length) + url.search });
        res.end();
        return;
      }
    }
    if (options.echoCredentials && req.headers.authorization) {
      const shown = Buffer.from(req.headers.authorization.replace(/^Basic /i, ''), 'base64').toString('utf8');
      const line = `ERR credentials ${shown} (${req.headers.authorization}) are not welcome\n`;
      res.writeHead(200, { 'Content-Type': 'application/x-git-upload-pack-advertisement' });
      res.end(`${(line.length + 4).toString(16).padStart(4, '0')}${line}`);
      return;
    }
    const auth = typeof options.auth === 'function' ? options.auth(url.pathname) : options.auth;
    if (auth && !authorized(req.headers.authorization, auth)) {
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="git"', 'Content-Type': 'text/plain' });
      res.end('authentication required\n');
      return;
    }
    serveCgi(projectRoot, url, req, res, throttle);
  });
  await listen(server);
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    requests,
    setBytesPerSecond: (bytesPerSecond) => {
      throttle.bytesPerSecond = bytesPerSecond;
    },
    close: () => closeServer(server),
  };
}

function serveCgi(
  projectRoot: string,
  url: URL,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  throttle: { bytesPerSecond: number | undefined },
): void {
  const header = (name: string): string => {
    const value = req.headers[name];
    return Array.isArray(value) ? value.join(', ') : (value ?? '');
  };
  const child = spawn('git', ['http-backend'], {
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: projectRoot,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_PROJECT_ROOT: projectRoot,
      GIT_HTTP_EXPORT_ALL: '1',
      GIT_PROTOCOL: header('git-protocol'),
      REQUEST_METHOD: req.method ?? 'GET',
      PATH_INFO: decodeURIComponent(url.pathname),
      QUERY_STRING: url.search.slice(1),
      CONTENT_TYPE: header('content-type'),
      HTTP_CONTENT_ENCODING: header('content-encoding'),
      REMOTE_ADDR: req.socket.remoteAddress ?? '127.0.0.1',
    },
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  req.pipe(child.stdin);
  child.stdin.on('error', () => undefined);

  // CGI output: header lines, a blank line, then the body.
  let head = Buffer.alloc(0);
  let headersSent = false;
  child.stdout.on('data', (chunk: Buffer) => {
    const { bytesPerSecond } = throttle;
    if (bytesPerSecond !== undefined) {
      child.stdout.pause();
      setTimeout(() => child.stdout.resume(), (chunk.length / bytesPerSecond) * 1000);
    }
    if (headersSent) {
      res.write(chunk);
      return;
    }
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf('\r\n\r\n');
    if (end < 0) return;
    let status = 200;
    for (const line of head.subarray(0, end).toString('latin1').split('\r\n')) {
      const colon = line.indexOf(':');
      const name = line.slice(0, colon).trim();
      const value = line.slice(colon + 1).trim();
      if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10);
      else res.setHeader(name, value);
    }
    res.writeHead(status);
    headersSent = true;
    res.write(head.subarray(end + 4));
  });
  child.on('close', () => {
    if (!headersSent) res.writeHead(500);
    res.end();
  });
}

export interface BlackHoleServer {
  origin: string;
  close(): Promise<void>;
}

/** Accepts connections and never answers: the client waits until it gives up or is killed. */
export async function startBlackHoleServer(): Promise<BlackHoleServer> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  await listen(server);
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await closeServer(server);
    },
  };
}

function listen(server: net.Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
}

function closeServer(server: net.Server): Promise<void> {
  if (server instanceof http.Server) server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}
