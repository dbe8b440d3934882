// Test/dev entry of the inspect thread when running from TypeScript sources: Node 20 does not
// apply --import loaders to a worker's own entry file, so register tsx here, then load it.
import { URL } from 'node:url';
import { register } from 'tsx/esm/api';

register();
await import(new URL('./inspect-thread.ts', import.meta.url).href);
