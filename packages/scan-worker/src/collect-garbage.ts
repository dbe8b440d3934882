import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * A function that runs a full garbage collection of this thread's heap, or null where V8 will
 * not give one. Without `--expose-gc` on the command line, V8 still hands `gc` to contexts made
 * after the flag is set at run time: set it, make one, keep its `gc`. (Node 20, 22 and 24 alike.)
 */
export function fullGarbageCollection(): (() => void) | null {
  if (typeof globalThis.gc === 'function') {
    const gc = globalThis.gc;
    return () => gc();
  }
  try {
    setFlagsFromString('--expose-gc');
    const gc: unknown = runInNewContext('gc');
    return typeof gc === 'function' ? () => (gc as () => void)() : null;
  } catch {
    return null;
  }
}
