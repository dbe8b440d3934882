import type { Server } from 'node:net';
import { ConfigError } from '@reposcan/config';

/**
 * Binds `server`, or throws a ConfigError that says which variable to change: the apps print it
 * without a stack and exit 1. Called before a process starts any work, so a port that is taken
 * stops it before a worker has picked up a scan.
 */
export function listenOn(server: Server, port: number, host: string, variable: 'PORT' | 'METRICS_PORT'): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException): void => reject(explainListenError(error, port, host, variable));
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
}

function explainListenError(error: NodeJS.ErrnoException, port: number, host: string, variable: string): Error {
  const at = `${variable}=${port}`;
  switch (error.code) {
    case 'EADDRINUSE':
      return new ConfigError([
        `${at}: port ${port} on ${host} is in use by another process; stop it or set ${variable} to a free port`,
      ]);
    case 'EACCES':
      return new ConfigError([
        `${at}: this user may not listen on port ${port} of ${host}; set ${variable} to a port above 1023`,
      ]);
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
      return new ConfigError([
        `HOST=${JSON.stringify(host)}: not an address of this machine; set HOST to one (127.0.0.1, or 0.0.0.0 for every interface)`,
      ]);
    default:
      return error;
  }
}
