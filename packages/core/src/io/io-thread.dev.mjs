// Entry of an io thread when running from TypeScript sources (tests): Node 20 does not apply
// --import loaders to a worker's own entry file, so register tsx here, then load it.
import { URL } from 'node:url';
import { register } from 'tsx/esm/api';

register();
await import(new URL('./io-thread.ts', import.meta.url).href);
