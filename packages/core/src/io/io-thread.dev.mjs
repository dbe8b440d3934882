// Entry of an io thread when running from TypeScript sources (tests): Node 20 does not apply
// --import loaders to a worker's own entry file, so register tsx here, then load the entry named
// in workerData.
import { URL } from 'node:url';
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(new URL(workerData.entry, import.meta.url).href);
