// Unit tests open no network connection: one that tries (to Redis, an API, a git server) fails
// at once, instead of passing here because a service happened to be running.
import { Socket } from 'node:net';
import { afterEach } from 'vitest';

type Connect = (this: Socket, ...args: unknown[]) => Socket;

// eslint-disable-next-line @typescript-eslint/unbound-method -- called below with the socket as `this`
const connect = Socket.prototype.connect as Connect;
const refused: string[] = [];

function target(args: unknown[]): { path?: unknown; host?: unknown; port?: unknown } {
  // net.connect() hands on its arguments already normalised, as an array.
  const first = Array.isArray(args[0]) ? (args[0] as unknown[])[0] : args[0];
  if (typeof first === 'object' && first !== null) return first;
  if (typeof first === 'string' && !/^\d+$/.test(first)) return { path: first };
  return { port: first, host: args[1] };
}

(Socket.prototype as { connect: Connect }).connect = function (this: Socket, ...args: unknown[]): Socket {
  const { path, host, port } = target(args);
  // A local socket file (a pipe, an IPC channel) is not the network.
  if (typeof path === 'string' && path !== '') return connect.apply(this, args);
  const where = `${typeof host === 'string' ? host : 'localhost'}:${String(port)}`;
  refused.push(where);
  throw new Error(
    `A unit test tried to connect to ${where}. Tests that need Redis, a server or the network belong in the integration project (vitest.config.ts).`,
  );
};

afterEach(() => {
  if (refused.length > 0)
    throw new Error(
      `A unit test tried to connect to ${refused.splice(0).join(', ')}: move it to the integration project (vitest.config.ts).`,
    );
});
