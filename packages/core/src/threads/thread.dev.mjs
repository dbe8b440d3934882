// Entry of every thread when running from TypeScript sources (tests, tsx; see worker-thread.ts):
// Node 20 does not apply --import loaders to a worker's own entry file, so register tsx here,
// then load the entry named in workerData.
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(workerData.entry);
